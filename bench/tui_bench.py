"""TUI speed figures (prints them, each against its target).

    .venv/bin/python bench/tui_bench.py

- commit -> first check row updated: an agent commit moves the branch ref;
  time until the checks table shows a check of the new run that is no
  longer waiting (the diff checks). Real watcher, real local backend.
  Target: median under 150 ms.
- key-press latency while a check streams 100,000 lines: from the moment
  the install check starts streaming until it ends, keys are posted as a
  terminal would (cursor moves that switch the log between checks), each
  timed until the table dispatches the cursor's move to the row the key
  asked for. Target: p95 under 16 ms (a frame at 60 Hz).
- peak RSS of the process that draws the screen.

First on the supervisor's own screen (the supervisor and its screen in
this process). Then on a viewer as `gatetui view` runs it: a process of
its own (bench/tui_viewer.py) attached to the socket of the supervisor
this process runs, whose own screen is open too (the workshop: the
presenter's screen and the room's viewers); the viewer measures itself
and its RSS is its own.

A target missed is printed as MISSED, never left out.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import tempfile
from asyncio.subprocess import PIPE
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual.message import Message  # noqa: E402
from tui_probes import (  # noqa: E402
    SIZE,
    Figures,
    KeyProbe,
    first_row_moved,
    now,
    peak_rss_mb,
    press_while_streaming,
    report,
)

from gatetui.backends.base import CommandResult  # noqa: E402
from gatetui.backends.local import LocalBackend  # noqa: E402
from gatetui.supervise.ref_watcher import RefWatcher  # noqa: E402
from gatetui.supervise.serve import SubmitServer  # noqa: E402
from gatetui.supervise.store import Store  # noqa: E402
from gatetui.supervise.supervisor import Supervisor  # noqa: E402
from gatetui.tui.app import GatetuiApp  # noqa: E402

VIEWER = Path(__file__).with_name("tui_viewer.py")

LINES = 100_000
ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.invalid",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.invalid",
    "HOME": "/nonexistent",
    "PATH": "/usr/bin:/bin",
}
FILES = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1"\n',
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, env=ENV, capture_output=True, text=True, check=True).stdout.strip()


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "branch", "agent/x")
    return repo


def new_commit(repo: Path, n: int) -> str:
    """A commit on top of agent/x, not yet on it (plumbing: no checkout)."""
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=repo,
        env=ENV,
        input=f"{n}\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    subprocess.run(["git", "read-tree", "agent/x"], cwd=repo, env=ENV, check=True)
    subprocess.run(
        ["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},note{n}.txt"], cwd=repo, env=ENV, check=True
    )
    tree = git(repo, "write-tree")
    return git(repo, "commit-tree", tree, "-p", "agent/x", "-m", f"agent {n}")


@contextlib.asynccontextmanager
async def own_screen(
    sup: Supervisor, root: Path, hook: Callable[[Message], None] | None = None, serve: bool = False
) -> AsyncIterator[GatetuiApp]:
    """The supervisor's own screen (`hook` on it); with `serve` its socket
    open for viewers (yielded once it listens)."""
    app = GatetuiApp(sup, submit_server=SubmitServer(sup, root / "s.sock") if serve else None)
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        while serve and not (root / "s.sock").exists():
            await pilot.pause(0.01)
        yield app
        await pilot.press("q")


class Viewer:
    """bench/tui_viewer.py in a process of its own, watching `socket`."""

    def __init__(self, process: asyncio.subprocess.Process):
        if process.stdin is None or process.stdout is None:
            raise RuntimeError("the viewer was started without its pipes")
        self.process, self.stdin, self.stdout = process, process.stdin, process.stdout

    @classmethod
    async def start(cls, socket: Path, mode: str) -> Viewer:
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(VIEWER), str(socket), mode, stdin=PIPE, stdout=PIPE
        )
        viewer = cls(process)
        assert await viewer.read() == {"ready": True}
        return viewer

    async def read(self) -> dict[str, Any]:
        line = await self.stdout.readline()
        if not line:
            raise RuntimeError(f"the viewer ended early (exit {await self.process.wait()})")
        data: dict[str, Any] = json.loads(line)
        return data

    def ask(self, data: dict[str, Any]) -> None:
        self.stdin.write(json.dumps(data).encode() + b"\n")

    async def figures(self) -> Figures:
        """Its last line, once its stdin is closed and it quit."""
        self.stdin.close()
        figures = Figures.from_json(json.dumps(await self.read()))
        await self.process.wait()
        return figures


async def commit_latency(root: Path, viewer: bool, rounds: int = 9) -> Figures:
    repo = make_repo(root)
    (root / "work").mkdir()
    sup = Supervisor(
        repo, LocalBackend(work_root=root / "work"), Store.open(root / "state"), watcher=RefWatcher(repo, step_ms=30)
    )
    figures = Figures()
    async with own_screen(sup, root, serve=viewer) as app:
        watching = await Viewer.start(root / "s.sock", "commits") if viewer else None
        await asyncio.sleep(0.5)
        for n in range(rounds):
            sha = await asyncio.to_thread(new_commit, repo, n)
            start = now()
            if watching is not None:
                watching.ask({"sha": sha, "at": start})
            await asyncio.to_thread(git, repo, "update-ref", "refs/heads/agent/x", sha)
            if watching is not None:
                await watching.read()
            else:
                while not first_row_moved(app, sha):
                    await asyncio.sleep(0.002)
                figures.commits.append((now() - start) * 1000)
            await asyncio.sleep(0.4)
        sup.cancel("agent/x")
        if watching is not None:
            figures = await watching.figures()
    return figures


class StreamingWorkspace:
    """The install's first command streams LINES lines, 100 a millisecond;
    every later command (the rest of the install, the base's) says one line:
    the check streams LINES in all, as the figure says."""

    label, path = "bench", "/ws"

    def __init__(self, backend: StreamingBackend):
        self.backend = backend

    async def run(
        self,
        command: str,
        *,
        timeout: float,
        on_output: Callable[[str], None],
        env: Mapping[str, str] | None = None,
        network: bool = True,
    ) -> CommandResult:
        await self.backend.go.wait()
        blocks, self.backend.blocks = self.backend.blocks, 0
        for block in range(blocks):
            on_output("".join(f"install line {block * 100 + i}: Collecting something-or-other\n" for i in range(100)))
            await asyncio.sleep(0.001)
        if not blocks:
            on_output(f"ran {command[:40]}\n")
        return CommandResult(0, 1.0, 1.0, 50 << 20)

    def report_path(self, name: str) -> str:
        return f"/r/{name}"

    async def read_report(self, name: str) -> bytes | None:
        return None

    async def write_files(self, files: Mapping[str, bytes | None]) -> None:
        return None

    async def fork(self, count: int) -> list[StreamingWorkspace]:
        return [StreamingWorkspace(self.backend) for _ in range(count)]

    async def close(self) -> None:
        return None


class StreamingBackend:
    name, notes, measured, isolation, layers = "bench", (), False, None, None

    def __init__(self) -> None:
        self.blocks = LINES // 100  # what the next command streams, in blocks of 100 lines
        self.go = asyncio.Event()  # set once the screen measured watches

    async def account(self) -> None:
        return None

    async def preflight(self, tools: object, indexes: object = ()) -> None:
        return None

    async def open(self, export: object, label: str) -> StreamingWorkspace:
        return StreamingWorkspace(self)


async def key_latency(root: Path, viewer: bool) -> Figures:
    """The install streams once the screen measured watches (a viewer
    started while it streamed would press keys on its last lines only)."""
    repo = make_repo(root)
    git(repo, "update-ref", "refs/heads/agent/x", new_commit(repo, 0))
    backend = StreamingBackend()
    sup = Supervisor(repo, backend, Store.open(root / "state"))  # type: ignore[arg-type]
    probe, figures = KeyProbe(), Figures()
    async with own_screen(sup, root, None if viewer else probe.hook, serve=viewer) as app:
        if not viewer:
            backend.go.set()
            await press_while_streaming(app, probe, figures)
            return figures
        watching = await Viewer.start(root / "s.sock", "keys")
        backend.go.set()
        return await watching.figures()


async def main() -> None:
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        own = await key_latency(Path(two), viewer=False)
        own.commits = (await commit_latency(Path(one), viewer=False)).commits
    own.rss_mb = peak_rss_mb()
    report("", own, "the whole process: app and supervisor")
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        seen = await key_latency(Path(two), viewer=True)
        seen.commits = (await commit_latency(Path(one), viewer=True)).commits
    report("viewer, its own process: ", seen, "the viewer's process alone")


if __name__ == "__main__":
    asyncio.run(main())
