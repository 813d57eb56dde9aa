"""Links in a run's tree, met by the backends' writes: committed by head
(in the fresh export a copy starts from) or planted by a command between
two writes (the gate writes its own runner files into a copy after run 1
ran there). In every fork mode of the local backend, and in a runtime
sandbox, base's files land in real folders at their paths and nothing on
the host outside the run changes."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gatetui.backends.local import LocalBackend
from gatetui.backends.local_workspace import LocalWorkspace
from gatetui.backends.runtime import RuntimeBackend, RuntimeSettings
from tests.runtime_emulator import Emulator
from tests.runtime_emulator.fixtures import emulator  # noqa: F401 - a fixture
from tests.support.local import fork_mode_or_skip
from tests.support.trees import listing

pytestmark = pytest.mark.sandbox
MODES = ["overlay", "bind", "swap"]
TARGETS = ["absolute", "dotdot", "inside"]
FAST = RuntimeSettings(capacity_wait=5, start_seconds=1, command_grace=5)


def head_tree(link: str) -> Callable[[Path], None]:
    """An export of head as git writes it: spec/ holds its tests, `tests`
    is the committed link."""

    def export(dest: Path) -> None:
        (dest / "spec").mkdir(parents=True)
        (dest / "spec" / "test_x.py").write_text("head's\n")
        (dest / "tests").symlink_to(link)

    return export


def link_text(target: str, outside: Path) -> str:
    """From a copy or the original (three levels below tmp_path: work, the
    run's folder, its tree), `../../..` is tmp_path itself."""
    return {"absolute": str(outside), "dotdot": "../../..", "inside": "spec"}[target]


def host(tmp_path: Path) -> dict[str, bytes]:
    """Everything under tmp_path but the runs' work folder."""
    return {k: v for k, v in listing(tmp_path).items() if not k.startswith("work")}


async def shown(ws: LocalWorkspace, command: str) -> str:
    chunks: list[str] = []
    result = await ws.run(command, timeout=30, on_output=chunks.append)
    assert result.exit_code == 0, "".join(chunks)
    return "".join(chunks)


SEEN = "test -L tests && echo link || echo folder; cat tests/test_x.py; ls tests; ls spec"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("target", TARGETS)
def test_a_committed_link_where_base_has_its_tests_is_replaced_in_every_mode(
    tmp_path: Path, mode: str, target: str
) -> None:
    fork_mode_or_skip(mode)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary").write_text("host\n")
    export = head_tree(link_text(target, outside))
    before = host(tmp_path)

    async def go() -> list[str]:
        ws = await LocalBackend(work_root=tmp_path / "work", fork_mode=mode).open(export, "t")
        try:
            [copy] = await ws.fork(1, export)
            try:
                await copy.write_files({"tests/test_x.py": b"base's\n"})
                in_copy = await shown(copy, SEEN)
            finally:
                await copy.close()
            await ws.write_files({"tests/test_x.py": b"gate's\n"})  # the original's tree, as the gate writes its own
            return [in_copy, await shown(ws, SEEN)]
        finally:
            await ws.close()

    assert asyncio.run(go()) == ["folder\nbase's\ntest_x.py\ntest_x.py\n", "folder\ngate's\ntest_x.py\ntest_x.py\n"]
    assert host(tmp_path) == before


@pytest.mark.parametrize("mode", MODES)
def test_a_link_a_run_planted_at_the_gates_folder_is_replaced_in_every_mode(tmp_path: Path, mode: str) -> None:
    """Run 1 swaps the gate's folder (its name is in the tree for the run
    to see) for a link to the host, and a folder below it too; the reruns'
    files written next land in the gate's own folder."""
    fork_mode_or_skip(mode)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary").write_text("host\n")
    export = head_tree("spec")
    before = host(tmp_path)
    plant = (
        f"rm -rf .site-g && ln -s {outside} .site-g && mkdir -p lib && ln -s {outside} lib/deep && ln -s ../../.. up"
    )

    async def go() -> str:
        ws = await LocalBackend(work_root=tmp_path / "work", fork_mode=mode).open(export, "t")
        try:
            [copy] = await ws.fork(1, export)
            try:
                await copy.write_files({".site-g/plugin.py": b"gate 1\n"})
                await shown(copy, plant)
                await copy.write_files(
                    {
                        ".site-g/plugin.py": b"gate 2\n",
                        ".site-g/sub/more.py": b"more\n",
                        "lib/deep/x.py": b"x\n",
                        "up/y.py": b"y\n",
                        "lib/deep/gone.py": None,
                    }
                )
                return await shown(
                    copy, "cat .site-g/plugin.py .site-g/sub/more.py lib/deep/x.py up/y.py; find .site-g lib up -type l"
                )
            finally:
                await copy.close()
        finally:
            await ws.close()

    assert asyncio.run(go()) == "gate 2\nmore\nx\ny\n"
    assert host(tmp_path) == before
    assert [p for p in listing(tmp_path) if p.endswith(".py")] == []  # nor in the work folder, out of the tree


def test_a_runtime_sandbox_clears_the_way_before_files_are_written(tmp_path: Path, emulator: Emulator) -> None:
    """The emulator's sandbox is a folder on this machine: a link a run
    plants there could reach it. Inside the sandbox a link to a folder of
    the tree would carry base's file into head's folder instead."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary").write_text("host\n")
    before = host(tmp_path)

    def export(dest: Path) -> None:
        (dest / "spec").mkdir(parents=True)
        (dest / "spec" / "test_x.py").write_text("head's\n")
        (dest / "tests").mkdir()
        (dest / "tests" / "old.py").write_text("head's\n")

    async def go() -> str:
        backend = RuntimeBackend(settings=FAST)
        await backend.preflight(())
        workspace = await backend.open(export, "run1")
        copies = await workspace.fork(1, export)
        lines: list[str] = []
        try:
            await copies[0].run(
                f"rm -rf tests && ln -s {outside} tests && mkdir a && ln -s ../spec a/in && "
                "ln -s ../spec/test_x.py a/file.py",
                timeout=30,
                on_output=lines.append,
            )
            await copies[0].write_files(
                {
                    "tests/test_x.py": b"base's\n",
                    "a/in/test_y.py": b"base's\n",
                    "a/file.py": b"base's\n",
                    "tests/old.py": None,
                    "a/in": None,
                }
            )
            await copies[0].run(
                "test -L tests && echo link || echo folder; cat tests/test_x.py spec/test_x.py; "
                "ls a/in; ls spec; find . -type l",
                timeout=30,
                on_output=lines.append,
            )
        finally:
            for ws in (*copies, workspace):
                await ws.close()
        return "".join(lines)

    assert asyncio.run(go()) == "folder\nbase's\nhead's\ntest_y.py\ntest_x.py\n"
    assert host(tmp_path) == before
    assert os.listdir(outside) == ["canary"]
