"""The local backend: process groups, time limits, scrubbed environment,
and copies that each run their own installed code at the original's path."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gatetui.backends.isolation import keep_when
from gatetui.backends.local import LocalBackend, probe_fork_mode
from gatetui.backends.local_workspace import LocalWorkspace
from gatetui.backends.uids import uid_processes
from gatetui.errors import BackendError, BadInput
from tests.support.local import export_files, fork_mode_or_skip, run


async def open_ws(
    tmp_path: Path, files: dict[str, str], mode: str | None = None, isolate: bool | None = None
) -> LocalWorkspace:
    backend = LocalBackend(work_root=tmp_path, fork_mode=mode, isolate=isolate)
    return await backend.open(export_files(files), "t")


@pytest.mark.sandbox
def test_output_streams_and_exit_code_is_kept(tmp_path: Path) -> None:
    async def go() -> None:
        ws = await open_ws(tmp_path, {"a.txt": "hello\n"})
        result, text = await run(ws, "cat a.txt; echo oops >&2; exit 7")
        assert (result.exit_code, text) == (7, "hello\noops\n")
        assert result.output_tail == "hello\noops\n"
        await ws.close()

    asyncio.run(go())


def read_pid(path: Path) -> int | None:
    """The pid a command's background child wrote to `path` (None: it never did)."""
    text = path.read_text().strip() if path.exists() else ""
    return int(text) if text else None


def running(pid: int) -> bool:
    """Whether `pid` still runs; a zombie (dead, its parent gone, not yet reaped) does not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pid: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while running(pid):
        if time.monotonic() > deadline:
            pytest.fail(f"the background child (pid {pid}) was still running {timeout} s after its group was killed")
        time.sleep(0.01)  # paces the polling; the deadline above bounds it


# The background child writes its pid first (the command waits for it), so that
# the test can wait until that very process is gone, then find its marker unwritten.
CHILD = "sh -c 'echo $$ > child.pid; sleep {seconds}; touch {marker}'"
CHILD_NAMED = "until [ -s child.pid ]; do sleep 0.01; done"


@pytest.mark.sandbox
@pytest.mark.parametrize("isolate", [False, None], ids=["plain", "isolated-if-possible"])
def test_timeout_kills_the_whole_process_group(tmp_path: Path, isolate: bool | None) -> None:
    marker = tmp_path / "survivor"

    async def go() -> int | None:
        ws = await open_ws(tmp_path, {}, isolate=isolate)
        started = time.monotonic()
        child = CHILD.format(seconds=30, marker=marker)  # outlives the limit: only the kill stops it
        result, _ = await run(ws, f"{child} & {CHILD_NAMED}; sleep 60", timeout=2)
        assert result.timed_out is True
        assert result.exit_code is None
        assert time.monotonic() - started < 12
        if ws.uid is not None:
            assert uid_processes(ws.uid) == []
        pid = read_pid(ws.canonical / "child.pid")
        await ws.close()
        return pid

    pid = asyncio.run(go())
    if isolate is False:  # an isolated run cannot see tmp_path: the uid check above holds
        assert pid is not None, "the background child had not written its pid when the time limit struck"
        wait_gone(pid)
        assert marker.exists() is False  # the background child died with its group


@pytest.mark.sandbox
@pytest.mark.parametrize("isolate", [False, None], ids=["plain", "isolated-if-possible"])
def test_background_process_is_killed_when_the_command_ends(tmp_path: Path, isolate: bool | None) -> None:
    marker = tmp_path / "late"

    async def go() -> int | None:
        ws = await open_ws(tmp_path, {}, isolate=isolate)
        child = CHILD.format(seconds=2, marker=marker)
        result, _ = await run(ws, f"(setsid sleep 30 & {child}) >/dev/null 2>&1 & {CHILD_NAMED}; echo started")
        assert result.exit_code == 0
        if ws.uid is not None:
            assert uid_processes(ws.uid) == []
        pid = read_pid(ws.canonical / "child.pid")
        await ws.close()
        return pid

    pid = asyncio.run(go())
    if isolate is False:
        assert pid is not None, "the background child never wrote its pid though the command waited for it"
        wait_gone(pid)
        assert marker.exists() is False


@pytest.mark.sandbox
@pytest.mark.parametrize("isolate", [False, None], ids=["plain", "isolated-if-possible"])
def test_environment_is_an_allowlist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolate: bool | None) -> None:
    monkeypatch.setenv("RUNTIME_API_KEY", "secret-key")
    monkeypatch.setenv("SUPERVISOR_TOKEN", "secret-token")
    monkeypatch.setenv("PIP_INDEX_URL", "file:///somewhere")

    async def go() -> tuple[str, bool, str]:
        ws = await open_ws(tmp_path, {}, isolate=isolate)
        _, text = await run(ws, "env", env={"PYTEST_ADDOPTS": "-q"})
        await ws.close()
        return text, ws.uid is not None, ws.where.home

    text, isolated, home = asyncio.run(go())
    env = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    assert "RUNTIME_API_KEY" not in env
    assert "SUPERVISOR_TOKEN" not in env
    assert env["PIP_INDEX_URL"] == "file:///somewhere"
    assert env["PYTEST_ADDOPTS"] == "-q"
    assert set(env) & {"NO_COLOR", "PYTHONUNBUFFERED"} == set()  # nothing only the gate sets
    if isolated:  # its own /tmp is the ordinary temporary folder: no TMPDIR, as on any machine
        assert (env["HOME"], env.get("TMPDIR")) == (home, None)
    else:
        assert env["HOME"].startswith(str(tmp_path))
        assert env["TMPDIR"].startswith(str(tmp_path))


@pytest.mark.sandbox
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
    result = asyncio.run(
        run_process(
            ["/bin/sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x"],
            cwd=str(tmp_path),
            env={"PATH": os.defpath},
            timeout=30,
            on_output=lambda t: seen.append(len(t)),
            output_cap=1000,
        )
    )
    assert (len(result.output_tail), result.dropped_bytes, sum(seen)) == (1000, 299000, 300000)
    assert result.output_tail == "x" * 1000


@pytest.mark.sandbox
@pytest.mark.parametrize(
    ("mode", "isolate"), [("overlay", None), ("bind", None), ("overlay", False), ("bind", False), ("swap", None)]
)
def test_a_copy_is_a_fresh_tree_with_only_the_environment_of_the_install(
    tmp_path: Path, mode: str, isolate: bool | None
) -> None:
    """What the install wrote into the tree (a rewritten file, a new one, a
    home file) never reaches a copy; the environment folder does, read-only
    where the run is isolated, and whatever git held at its place is gone."""
    fork_mode_or_skip(mode)
    files = {"code.txt": "from git\n", "env/planted.txt": "from git\n"}
    install = (
        "echo rewritten > code.txt; echo new > extra.txt; rm -r env; mkdir env; echo made > env/lib.txt; "
        'echo home > "$HOME/dot"'
    )

    async def go() -> tuple[str, str]:
        ws = await open_ws(tmp_path, files, mode, isolate)
        try:
            installed, _ = await run(ws, install)
            assert installed.ok
            copies = await ws.fork(1, export_files(files), ("env", "absent"))
            try:
                _, seen = await run(
                    copies[0],
                    'cat code.txt; ls; ls env; ls "$HOME"; '
                    "(echo x > env/lib.txt) 2>/dev/null && echo env-writable || echo env-read-only",
                )
            finally:
                await copies[0].close()
            _, after = await run(ws, "cat env/lib.txt")
        finally:
            await ws.close()
        return seen, after

    seen, after = asyncio.run(go())
    guarded = isolate is None and mode != "swap" and os.geteuid() == 0
    assert seen == "from git\ncode.txt\nenv\nlib.txt\n" + ("env-read-only\n" if guarded else "env-writable\n")
    assert after == "made\n"  # the original's environment is never written by a copy


@pytest.mark.sandbox
@pytest.mark.parametrize("mode", ["overlay", "bind", "swap"])
def test_each_copy_runs_its_own_code_at_the_original_path(tmp_path: Path, mode: str) -> None:
    """A venv holds absolute paths: a copy must see its own files at the
    original's path, not the original's files."""
    fork_mode_or_skip(mode)

    async def go() -> list[str]:
        files = {"code.txt": "original\n", "gone.txt": "x\n"}
        ws = await open_ws(tmp_path, files, mode)
        copies = await ws.fork(3, export_files(files))
        for i, copy in enumerate(copies):
            await copy.write_files({"code.txt": f"copy {i}\n".encode(), "gone.txt": None})
        canonical = ws.path
        outs = await asyncio.gather(
            *(run(c, f"cd {canonical} && cat code.txt && ls && sleep 0.3 && cat {canonical}/code.txt") for c in copies)
        )
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


def test_a_probe_that_could_not_run_is_not_remembered() -> None:
    """A probe run while the tools were out of reach (here: PATH empty; on a
    loaded machine: a timeout) says so, and the next probe tries again: one
    bad moment must not leave the process without isolation for good. In a
    fresh interpreter, since a good result is kept for the process's life."""
    if os.geteuid() != 0:
        pytest.skip("mount namespaces need root here")
    code = (
        "import os\nfrom gatetui.backends.isolation import probe_isolation\n"
        "from gatetui.backends.local import probe_fork_mode\n"
        "path = os.environ['PATH']\nos.environ['PATH'] = '/nonexistent'\n"
        "print(probe_fork_mode(), probe_isolation().full, probe_isolation().reason)\n"
        "os.environ['PATH'] = path\nprint(probe_fork_mode() != 'swap', probe_isolation().full)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.stdout, done.stderr) == ("swap False missing unshare, setpriv, mount\nTrue True\n", "")


def test_a_kept_probe_runs_once_and_a_short_one_again() -> None:
    runs: list[str] = []

    @keep_when(lambda mode: mode != "swap")
    def probe() -> str:
        runs.append("probe")
        return ["swap", "bind", "overlay"][len(runs) - 1]

    assert [probe(), probe(), probe(), len(runs)] == ["swap", "bind", "bind", 2]


def test_the_fork_mode_is_chosen_by_the_supervisors_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every mode can be tested where overlays work; the JSON says which ran."""
    monkeypatch.setenv("GATETUI_FORK_MODE", "bind")
    backend = LocalBackend(work_root=tmp_path, isolate=False)
    assert (backend.fork_mode, backend.isolation.to_json()["fork_mode"]) == ("bind", "bind")


def test_an_unknown_fork_mode_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GATETUI_FORK_MODE", "copy")
    with pytest.raises(BadInput) as refused:
        LocalBackend(work_root=tmp_path)
    assert str(refused.value) == (
        "GATETUI_FORK_MODE='copy' is not one of overlay, bind, swap (how the gate "
        "copies a workspace; unset it to let the gate probe)"
    )


def test_a_tool_that_ran_a_moment_ago_is_not_asked_again_but_one_on_another_path_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The preflight's tool check runs once per tool and PATH in a while
    (a quarter second of pip per python gate), and still names a tool
    missing from a PATH it has not seen."""
    calls = tmp_path / "calls"
    tool = tmp_path / "bin" / "counted-tool"
    tool.parent.mkdir()
    tool.write_text(f"#!/bin/sh\necho ran >> {calls}\n")
    tool.chmod(0o755)
    backend = LocalBackend(work_root=tmp_path / "work")
    monkeypatch.setenv("PATH", f"{tool.parent}:{os.environ['PATH']}")
    for _ in range(3):
        asyncio.run(backend.preflight((("counted-tool", "--version"),)))
    assert calls.read_text() == "ran\n"
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(
        BackendError, match=r"^`counted-tool --version` does not run on this machine: install counted-tool"
    ):
        asyncio.run(backend.preflight((("counted-tool", "--version"),)))


@pytest.mark.sandbox
def test_a_cancel_while_a_workspace_opens_leaves_no_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A gate cancelled as it starts (the TUI's quit) may land in the last
    step of open, where the fork mode is read: the folder made for the
    workspace goes with the cancel."""
    import threading

    asked, go_on = threading.Event(), threading.Event()

    def slow_mode(self: LocalBackend) -> str:
        if any((tmp_path / "work").glob("gatetui-opening-*")):  # asked by open itself, its folder made
            asked.set()
            go_on.wait(30)
        return "overlay"

    monkeypatch.setattr(LocalBackend, "fork_mode", property(slow_mode))
    backend = LocalBackend(work_root=tmp_path / "work")

    async def scenario() -> None:
        task = asyncio.ensure_future(backend.open(lambda dest: dest.mkdir(), "opening"))
        await asyncio.to_thread(asked.wait, 30)  # open has reached the fork mode
        task.cancel()
        go_on.set()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert sorted(p.name for p in (tmp_path / "work").iterdir() if p.name.startswith("gatetui-")) == []
