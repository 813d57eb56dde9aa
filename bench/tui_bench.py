"""TUI speed figures (prints them, each against the target a presenter needs: a row within 150 ms of its commit, a key answered within a 60 Hz frame).

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
- peak RSS of the whole process (app + supervisor, both parts).

Then the same three for a viewer (`gatetui view`) beside the supervisor's
own screen, measured on the viewer: the supervisor, its screen and its
socket, and the viewer fed over that socket, in one process of their own
(`--viewer`; its RSS counts all of them).

A target missed is printed as MISSED, never left out.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual import events  # noqa: E402
from textual.message import Message  # noqa: E402
from textual.widgets import DataTable  # noqa: E402

from gatetui.backends.base import CommandResult  # noqa: E402
from gatetui.backends.local import LocalBackend  # noqa: E402
from gatetui.gate.checks import CheckId, Status  # noqa: E402
from gatetui.supervise.ref_watcher import RefWatcher  # noqa: E402
from gatetui.supervise.remote import RemoteSupervisor  # noqa: E402
from gatetui.supervise.serve import SubmitServer  # noqa: E402
from gatetui.supervise.store import Store  # noqa: E402
from gatetui.supervise.supervisor import Supervisor  # noqa: E402
from gatetui.tui.app import GatetuiApp  # noqa: E402
from gatetui.tui.viewer import ViewerApp  # noqa: E402

Shown = GatetuiApp | ViewerApp

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
async def screens(
    sup: Supervisor, root: Path, viewer: bool, hook: Callable[[Message], None] | None = None
) -> AsyncIterator[Shown]:
    """The supervisor's own screen, and with `viewer` a viewer beside it
    fed over the supervisor's socket: yields the screen measured (`hook` on it)."""
    own = GatetuiApp(sup, submit_server=SubmitServer(sup, root / "s.sock") if viewer else None)
    async with own.run_test(size=(150, 46), message_hook=None if viewer else hook) as pilot:
        if not viewer:
            yield own
            await pilot.press("q")
            return
        while not (root / "s.sock").exists():
            await pilot.pause(0.01)
        seen = ViewerApp(RemoteSupervisor(root / "s.sock"))
        async with seen.run_test(size=(150, 46), message_hook=hook) as watching:
            yield seen
            await watching.press("q")
        await pilot.press("q")


def first_row_moved(app: Shown, sha: str) -> bool:
    run = app.main.run
    if run is None or run.head != sha:
        return False
    table = app.main.query_one("#checks", DataTable)
    return any(str(table.get_cell(k, "status")) not in ("waiting", "") for k in table.rows)


async def commit_latency(root: Path, viewer: bool, rounds: int = 9) -> list[float]:
    repo = make_repo(root)
    (root / "work").mkdir()
    sup = Supervisor(
        repo, LocalBackend(work_root=root / "work"), Store.open(root / "state"), watcher=RefWatcher(repo, step_ms=30)
    )
    times = []
    async with screens(sup, root, viewer) as app:
        await asyncio.sleep(0.5)
        for n in range(rounds):
            sha = await asyncio.to_thread(new_commit, repo, n)
            start = time.perf_counter()
            await asyncio.to_thread(git, repo, "update-ref", "refs/heads/agent/x", sha)
            while not first_row_moved(app, sha):
                await asyncio.sleep(0.002)
            times.append((time.perf_counter() - start) * 1000)
            await asyncio.sleep(0.4)
        sup.cancel("agent/x")
    return times


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

    async def account(self) -> None:
        return None

    async def preflight(self, tools: object, indexes: object = ()) -> None:
        return None

    async def open(self, export: object, label: str) -> StreamingWorkspace:
        return StreamingWorkspace(self)


class KeyProbe:
    """Key presses posted as a terminal would, each timed until its effect:
    the checks table's cursor on the row the key moves it to (a rebuild of
    the table that highlights some other row is not the key's effect)."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.missed = 0  # presses whose effect did not come within a second
        self.answered = asyncio.Event()
        self._pending: tuple[int, float] | None = None  # (row expected, when posted)

    def hook(self, message: Message) -> None:
        if (
            isinstance(message, DataTable.RowHighlighted)
            and self._pending is not None
            and message.cursor_row == self._pending[0]
        ):
            self.times.append((time.perf_counter() - self._pending[1]) * 1000)
            self._pending = None
            self.answered.set()

    async def press(self, app: Shown, table: DataTable[object]) -> None:
        row = table.cursor_row
        key, expected = ("down", row + 1) if row == 0 else ("up", row - 1)
        self.answered.clear()
        self._pending = (expected, time.perf_counter())
        app.post_message(events.Key(key, None))
        try:
            await asyncio.wait_for(self.answered.wait(), 1.0)
        except TimeoutError:
            self._pending, self.missed = None, self.missed + 1


async def key_latency(root: Path, viewer: bool) -> tuple[KeyProbe, int, float]:
    """Keys pressed from the moment the install check starts streaming
    until it ends (it used to start pressing as soon as the run started: the
    install was still waiting, so no key was pressed at all)."""
    repo = make_repo(root)
    git(repo, "update-ref", "refs/heads/agent/x", new_commit(repo, 0))
    sup = Supervisor(repo, StreamingBackend(), Store.open(root / "state"))  # type: ignore[arg-type]
    probe = KeyProbe()
    async with screens(sup, root, viewer, probe.hook) as app:

        def install() -> Status:
            run = app.main.run
            return run.checks[CheckId.INSTALL].status if run is not None else Status.WAITING

        table = app.main.query_one("#checks", DataTable)
        table.focus()
        while install() is Status.WAITING:
            await asyncio.sleep(0.005)
        started = time.perf_counter()
        while install() is Status.RUNNING:
            await probe.press(app, table)
            await asyncio.sleep(0.05)
        seconds = time.perf_counter() - started
        run = app.main.run
        streamed = run.logs[CheckId.INSTALL].total if run is not None and CheckId.INSTALL in run.logs else 0
    return probe, streamed, seconds


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) >= 2 else values[0]


def verdict(value: float, target: float) -> str:
    return f"target < {target:g}: {'met' if value < target else 'MISSED'}"


async def main(viewer: bool) -> None:
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        commits = await commit_latency(Path(one), viewer)
        probe, streamed, seconds = await key_latency(Path(two), viewer)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    median = statistics.median(commits)
    on = "viewer beside the supervisor's screen: " if viewer else ""
    print(
        f"{on}commit -> first check row updated: median {median:.0f} ms "
        f"(min {min(commits):.0f}, max {max(commits):.0f}, {len(commits)} commits; {verdict(median, 150)})"
    )
    missed = f", {probe.missed} without effect within 1 s" if probe.missed else ""
    if probe.times:
        print(
            f"{on}key press while streaming {streamed:,} lines in {seconds:.1f} s: p95 {p95(probe.times):.1f} ms, "
            f"median {statistics.median(probe.times):.1f} ms ({len(probe.times)} presses{missed}; "
            f"{verdict(p95(probe.times), 16)})"
        )
    else:
        print(f"{on}key press while streaming {streamed:,} lines in {seconds:.1f} s: no press measured{missed}")
    parts = "the supervisor, its screen and socket, the viewer" if viewer else "app, supervisor, both parts"
    print(f"{on}peak RSS: {rss:.0f} MB (the whole process: {parts})", flush=True)


if __name__ == "__main__":
    asyncio.run(main("--viewer" in sys.argv))
    if "--viewer" not in sys.argv:  # the viewer's figures from a process of their own: its RSS apart
        subprocess.run([sys.executable, __file__, "--viewer"], check=True)
