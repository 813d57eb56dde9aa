"""The local backend: process groups, time limits, scrubbed environment,
and copies that each run their own installed code at the original's path."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from gatetui.backends.isolation import uid_processes
from gatetui.backends.local import LocalBackend, LocalWorkspace, probe_fork_mode


def export_files(files: dict[str, str]):  # type: ignore[no-untyped-def]
    def export(dest: Path) -> None:
        dest.mkdir()
        for rel, text in files.items():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_text(text)

    return export


async def open_ws(tmp_path: Path, files: dict[str, str], mode: str | None = None,
                  isolate: bool | None = None) -> LocalWorkspace:
    backend = LocalBackend(work_root=tmp_path, fork_mode=mode, isolate=isolate)
    return await backend.open(export_files(files), "t")


async def run(ws: LocalWorkspace, command: str, timeout: float = 30, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    chunks: list[str] = []
    result = await ws.run(command, timeout=timeout, on_output=chunks.append, env=env)
    return result, "".join(chunks)


def test_output_streams_and_exit_code_is_kept(tmp_path: Path) -> None:
    async def go() -> None:
        ws = await open_ws(tmp_path, {"a.txt": "hello\n"})
        result, text = await run(ws, "cat a.txt; echo oops >&2; exit 7")
        assert (result.exit_code, text) == (7, "hello\noops\n")
        assert result.output_tail == "hello\noops\n"
        await ws.close()

    asyncio.run(go())


@pytest.mark.parametrize("isolate", [False, None], ids=["plain", "isolated-if-possible"])
def test_timeout_kills_the_whole_process_group(tmp_path: Path, isolate: bool | None) -> None:
    marker = tmp_path / "survivor"

    async def go() -> None:
        ws = await open_ws(tmp_path, {}, isolate=isolate)
        started = time.monotonic()
        result, _ = await run(ws, f"(sleep 3; touch {marker}) & sleep 60", timeout=0.5)
        assert result.timed_out is True
        assert result.exit_code is None
        assert time.monotonic() - started < 10
        if ws.uid is not None:
            assert uid_processes(ws.uid) == []
        await ws.close()

    asyncio.run(go())
    if isolate is False:  # an isolated run cannot see tmp_path: the uid check above holds
        time.sleep(3.5)
        assert marker.exists() is False  # the background child died with its group


@pytest.mark.parametrize("isolate", [False, None], ids=["plain", "isolated-if-possible"])
def test_background_process_is_killed_when_the_command_ends(tmp_path: Path, isolate: bool | None) -> None:
    marker = tmp_path / "late"

    async def go() -> None:
        ws = await open_ws(tmp_path, {}, isolate=isolate)
        result, _ = await run(ws, f"(setsid sleep 30 & (sleep 2; touch {marker})) >/dev/null 2>&1 & echo started")
        assert result.exit_code == 0
        if ws.uid is not None:
            assert uid_processes(ws.uid) == []
        await ws.close()

    asyncio.run(go())
    if isolate is False:
        time.sleep(2.5)
        assert marker.exists() is False


@pytest.mark.parametrize("isolate", [False, None], ids=["plain", "isolated-if-possible"])
def test_environment_is_an_allowlist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     isolate: bool | None) -> None:
    monkeypatch.setenv("RUNTIME_API_KEY", "secret-key")
    monkeypatch.setenv("SUPERVISOR_TOKEN", "secret-token")
    monkeypatch.setenv("PIP_INDEX_URL", "file:///somewhere")

    async def go() -> tuple[str, bool]:
        ws = await open_ws(tmp_path, {}, isolate=isolate)
        _, text = await run(ws, "env", env={"PYTEST_ADDOPTS": "-q"})
        await ws.close()
        return text, ws.uid is not None

    text, isolated = asyncio.run(go())
    env = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    assert "RUNTIME_API_KEY" not in env
    assert "SUPERVISOR_TOKEN" not in env
    assert env["PIP_INDEX_URL"] == "file:///somewhere"
    assert env["PYTEST_ADDOPTS"] == "-q"
    if isolated:
        assert (env["HOME"], env["TMPDIR"]) == ("/tmp/gatetui/home", "/tmp")
    else:
        assert env["HOME"].startswith(str(tmp_path))
        assert env["TMPDIR"].startswith(str(tmp_path))


def test_run_directory_is_private_and_removed_on_close(tmp_path: Path) -> None:
    async def go() -> Path:
        ws = await open_ws(tmp_path, {"x": "1"})
        assert (ws.root.stat().st_mode & 0o777) == 0o700
        await ws.close()
        return ws.root

    root = asyncio.run(go())
    assert root.exists() is False


def test_output_beyond_the_cap_is_counted_not_kept(tmp_path: Path) -> None:
    from gatetui.backends.process import run_process

    seen: list[int] = []
    result = asyncio.run(run_process(
        ["/bin/sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x"], cwd=str(tmp_path),
        env={"PATH": os.defpath}, timeout=30, on_output=lambda t: seen.append(len(t)), output_cap=1000,
    ))
    assert (len(result.output_tail), result.dropped_bytes, sum(seen)) == (1000, 299000, 300000)
    assert result.output_tail == "x" * 1000


@pytest.mark.parametrize("mode", ["overlay", "bind", "swap"])
def test_each_copy_runs_its_own_code_at_the_original_path(tmp_path: Path, mode: str) -> None:
    """A venv holds absolute paths: a copy must see its own files at the
    original's path, not the original's files."""
    if mode != "swap" and probe_fork_mode() == "swap":
        pytest.skip("this machine allows no mount namespace (not root, no user namespaces)")
    if mode == "overlay" and probe_fork_mode() != "overlay":
        pytest.skip("this machine refuses overlay mounts in a mount namespace")

    async def go() -> list[str]:
        ws = await open_ws(tmp_path, {"code.txt": "original\n", "gone.txt": "x\n"}, mode)
        copies = await ws.fork(3)
        for i, copy in enumerate(copies):
            await copy.write_files({"code.txt": f"copy {i}\n".encode(), "gone.txt": None})
        canonical = ws.path
        outs = await asyncio.gather(*(
            run(c, f'cd {canonical} && cat code.txt && ls && sleep 0.3 && cat {canonical}/code.txt')
            for c in copies
        ))
        _, original = await run(ws, "cat code.txt; ls")
        for copy in copies:
            await copy.close()
        await ws.close()
        return [text for _, text in outs] + [original]

    texts = asyncio.run(go())
    assert texts[:3] == [f"copy {i}\ncode.txt\ncopy {i}\n" for i in range(3)]
    assert texts[3] == "original\ncode.txt\ngone.txt\n"


def test_fork_mode_is_detected_as_root(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("mount namespaces need root here")
    assert probe_fork_mode() in ("overlay", "bind")
