"""TUI speed figures (prints them; targets from issue 4).

    .venv/bin/python bench/tui_bench.py

- commit -> first check row updated: an agent commit moves the branch ref;
  time until the checks table shows a check of the new run that is no
  longer waiting (the diff checks). Real watcher, real local backend.
- key-press latency while a check streams 100,000 lines: p95 of Pilot key
  presses (cursor moves that switch the log between checks).
- peak RSS of the whole process (app + supervisor) after that.
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual import events  # noqa: E402
from textual.message import Message  # noqa: E402
from textual.widgets import DataTable  # noqa: E402

from gatetui.gate.checks import CheckId  # noqa: E402

from gatetui.backends.base import CommandResult  # noqa: E402
from gatetui.backends.local import LocalBackend  # noqa: E402
from gatetui.supervise.store import Store  # noqa: E402
from gatetui.supervise.supervisor import Supervisor  # noqa: E402
from gatetui.tui.app import GatetuiApp  # noqa: E402
from gatetui.supervise.watch import RefWatcher  # noqa: E402

LINES = 100_000
ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@example.invalid", "HOME": "/nonexistent", "PATH": "/usr/bin:/bin"}
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
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, env=ENV, input=f"{n}\n",
                          capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(["git", "read-tree", "agent/x"], cwd=repo, env=ENV, check=True)
    subprocess.run(["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},note{n}.txt"],
                   cwd=repo, env=ENV, check=True)
    tree = git(repo, "write-tree")
    return git(repo, "commit-tree", tree, "-p", "agent/x", "-m", f"agent {n}")


def first_row_moved(app: GatetuiApp, sha: str) -> bool:
    run = app.main.run
    if run is None or run.head != sha:
        return False
    table = app.main.query_one("#checks", DataTable)
    return any(str(table.get_cell(k, "status")) not in ("waiting", "") for k in table.rows)


async def commit_latency(root: Path, rounds: int = 9) -> list[float]:
    repo = make_repo(root)
    (root / "work").mkdir()
    sup = Supervisor(repo, LocalBackend(work_root=root / "work"), Store.open(root / "state"),
                     watcher=RefWatcher(repo, step_ms=30))
    app = GatetuiApp(sup)
    times = []
    async with app.run_test(size=(150, 46)) as pilot:
        await pilot.pause(0.5)
        for n in range(rounds):
            sha = await asyncio.to_thread(new_commit, repo, n)
            start = time.perf_counter()
            await asyncio.to_thread(git, repo, "update-ref", "refs/heads/agent/x", sha)
            while not first_row_moved(app, sha):
                await asyncio.sleep(0.002)
            times.append((time.perf_counter() - start) * 1000)
            await pilot.pause(0.4)
        sup.cancel("agent/x")
        await pilot.press("q")
    return times


class StreamingWorkspace:
    label, path = "bench", "/ws"

    async def run(self, command: str, *, timeout: float, on_output: Callable[[str], None],
                  env: Mapping[str, str] | None = None, network: bool = True) -> CommandResult:
        for block in range(LINES // 100):
            on_output("".join(f"install line {block * 100 + i}: Collecting something-or-other\n" for i in range(100)))
            await asyncio.sleep(0.001)
        return CommandResult(0, 1.0, 1.0, 50 << 20)

    def report_path(self, name: str) -> str:
        return f"/r/{name}"

    async def read_report(self, name: str) -> bytes | None:
        return None

    async def write_files(self, files: Mapping[str, bytes | None]) -> None:
        return None

    async def fork(self, count: int) -> list[StreamingWorkspace]:
        return [StreamingWorkspace() for _ in range(count)]

    async def close(self) -> None:
        return None


class StreamingBackend:
    name, notes, measured, isolation, layers = "bench", (), False, None, None

    async def account(self) -> None:
        return None

    async def preflight(self, tools: object) -> None:
        return None

    async def open(self, export: object, label: str) -> StreamingWorkspace:
        return StreamingWorkspace()


async def key_latency(root: Path) -> tuple[list[float], int, float]:
    """Key events posted as a terminal would; latency = until the checks
    table's cursor move (the key's effect) is dispatched to the screen."""
    repo = make_repo(root)
    git(repo, "update-ref", "refs/heads/agent/x", new_commit(repo, 0))
    sup = Supervisor(repo, StreamingBackend(), Store.open(root / "state"))  # type: ignore[arg-type]
    app = GatetuiApp(sup)
    times: list[float] = []
    posted: list[float] = []

    def hook(message: Message) -> None:
        if isinstance(message, DataTable.RowHighlighted) and posted:
            times.append((time.perf_counter() - posted.pop()) * 1000)

    async with app.run_test(size=(150, 46), message_hook=hook) as pilot:
        while app.main.run is None or app.main.run.status != "running":
            await pilot.pause(0.01)
        table = app.main.query_one("#checks", DataTable)
        table.focus()
        await pilot.pause(0.1)
        install = app.main.run.checks[CheckId.INSTALL]
        started = time.perf_counter()
        keys = ["down", "up"]
        while install.status.value == "running":
            posted[:] = [time.perf_counter()]
            app.post_message(events.Key(keys[len(times) % 2], None))
            await asyncio.sleep(0.05)
        streamed = app.main.run.logs[CheckId.INSTALL].total
        seconds = time.perf_counter() - started
        await pilot.press("q")
    return times, streamed, seconds


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) >= 2 else values[0]


async def main() -> None:
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        commits = await commit_latency(Path(one))
        keys, streamed, seconds = await key_latency(Path(two))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"commit -> first check row updated: median {statistics.median(commits):.0f} ms "
          f"(min {min(commits):.0f}, max {max(commits):.0f}, {len(commits)} commits; target < 300)")
    print(f"key press while streaming {streamed:,} lines in {seconds:.1f} s: p95 {p95(keys):.1f} ms, "
          f"median {statistics.median(keys):.1f} ms ({len(keys)} presses; target < 50)")
    print(f"peak RSS: {rss:.0f} MB (target < 300)")


if __name__ == "__main__":
    asyncio.run(main())
