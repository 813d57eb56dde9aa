"""`make bench`: 20 branches gated at once with the runtime backend.

Against the test tree's emulator of the Runtime API, with a fixed delay on
every command (a slow suite on a remote VM, without burning this machine's
CPU), on a tiny node project (`npm ci` with no dependencies, `node --test`).
Prints, for each cap on sandboxes at once:
  wall time of the 20 / the slowest single gate   target < 1.5 with no cap
  (runs overlap instead of queueing; under a cap of 4 they must queue,
  one run at a time, and the figure says by how much)
  the most sandboxes alive at once, as the emulator counted them
  the sandboxes still alive at the end (must be 0)
Under a cap only 4 branches are gated by default (queued, 20 would take
twenty gates' time). The emulator runs in a process of its own, as Runtime
does on its own machines: in the bench's process it would share one GIL
with twenty SDK clients and the figure would measure that, not the overlap.
Reproduce: .venv/bin/python bench/runtime_bench.py [--delay S] [--branches N] [--caps none,4]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gatetui.backends.runtime import RuntimeBackend  # noqa: E402
from gatetui.backends.runtime_admission import SandboxCap  # noqa: E402
from gatetui.gate.events import RunFinished  # noqa: E402
from gatetui.gate.plan import GateRequest, make_plan  # noqa: E402
from gatetui.gate.runner import run_gate  # noqa: E402
from tests.runtime_emulator.fixtures import KEY  # noqa: E402
from tests.runtime_emulator.server import Emulator  # noqa: E402

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
NODE = {
    "package.json": '{"name": "tiny", "version": "0.0.0", "scripts": {"test": "node --test"}}\n',
    "package-lock.json": '{"name": "tiny", "version": "0.0.0", "lockfileVersion": 3, "requires": true,\n'
    ' "packages": {"": {"name": "tiny", "version": "0.0.0"}}}\n',
    "src/one.js": "exports.one = () => 1;\n",
    "test/one.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
    "const { one } = require('../src/one.js');\ntest('one', () => assert.equal(one(), 1));\n",
}


def git(repo: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True)


def make_repo(root: Path, branches: int) -> Path:
    """One repo, `main` at base and agent/b0.. each with an honest edit."""
    repo = root / "repo"
    for rel, text in NODE.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    for i in range(branches):
        git(repo, "checkout", "-qb", f"agent/b{i}", "main")
        (repo / "src/one.js").write_text(f"// edit {i}\nexports.one = () => 1;\n")
        git(repo, "commit", "-qam", f"edit {i}")
    git(repo, "checkout", "-q", "main")
    return repo


async def timed_gate(repo: Path, branch: str, cap: SandboxCap) -> tuple[float, str]:
    plan = await asyncio.to_thread(make_plan, GateRequest(repo, "main", branch))
    started = time.monotonic()
    verdict = "none"
    async for event in run_gate(plan, RuntimeBackend(cap=cap, on_progress=lambda _: None)):
        if isinstance(event, RunFinished):
            verdict = event.verdict.value
    return time.monotonic() - started, verdict


@contextlib.contextmanager
def emulator_process(root: Path, delay: float, limit: int | None) -> Iterator[Connection]:
    """The emulator in a forked process; the SDK here reaches it over HTTP."""
    here, there = multiprocessing.get_context("fork").Pipe()
    child = multiprocessing.get_context("fork").Process(target=_serve, args=(there, delay, limit), daemon=True)
    child.start()
    url = here.recv()
    saved = {k: os.environ.get(k) for k in ENV}
    os.environ.update(
        RUNTIME_API_URL=url, RUNTIME_API_KEY=KEY, NO_PROXY="127.0.0.1,localhost", XDG_CONFIG_HOME=str(root / "config")
    )
    try:
        yield here
    finally:
        here.send("close")
        left = here.recv()
        child.join(10)
        for key, value in saved.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
        if left:
            raise SystemExit(f"sandboxes left alive: {left}")


ENV = ("RUNTIME_API_URL", "RUNTIME_API_KEY", "NO_PROXY", "XDG_CONFIG_HOME")


def _serve(conn: Connection, delay: float, limit: int | None) -> None:
    emulator = Emulator(KEY, command_delay=delay, max_live=limit)
    conn.send(emulator.url)
    while True:
        ask = conn.recv()
        if ask == "reset":
            emulator.peak_live = 0
            conn.send(None)
        elif ask == "stats":
            conn.send((emulator.peak_live, emulator.refused, emulator.live()))
        else:
            left = emulator.live()
            emulator.close()
            conn.send(left)
            return


def measure(repo: Path, root: Path, branches: int, delay: float, limit: int | None) -> None:
    cap = SandboxCap(limit)
    with emulator_process(root / f"config-{limit}", delay, limit) as emulator:
        solo, _ = asyncio.run(timed_gate(repo, "agent/b0", cap))
        emulator.send("reset")
        emulator.recv()
        started = time.monotonic()

        async def every() -> list[tuple[float, str]]:
            return await asyncio.gather(*(timed_gate(repo, f"agent/b{i}", cap) for i in range(branches)))

        results = asyncio.run(every())
        wall = time.monotonic() - started
        emulator.send("stats")
        peak, refused, left = emulator.recv()
    verdicts = sorted({v for _, v in results})
    shown = "no cap" if limit is None else f"cap {limit}"
    print(
        f"{shown:>7}: {branches} gates in {wall:5.1f} s; one gate alone {solo:4.1f} s; "
        f"wall / slowest single gate = {wall / solo:4.2f}"
        f"{'  (target < 1.5)' if limit is None else '  (queued: whole runs, one cap-full at a time)'}"
    )
    print(
        f"         sandboxes alive at peak {peak}, refused by the account limit {refused}, "
        f"alive at the end {len(left)}; verdicts {verdicts}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--delay",
        type=float,
        default=15.0,
        help="seconds added to every command (the real "
        "commands of 20 gates add ~14 s of CPU on 2 cores: a shorter delay measures that)",
    )
    parser.add_argument("--branches", type=int, default=20)
    parser.add_argument("--caps", default="none,4", help="comma-separated: none or a number")
    parser.add_argument(
        "--capped-branches",
        type=int,
        default=4,
        help="branches gated under a cap (they queue: 20 would take 20 gates' time)",
    )
    args = parser.parse_args()
    print(
        f"runtime backend against the emulator, {args.delay:.1f} s per command, "
        f"{args.branches} branches of a node project at once"
    )
    with tempfile.TemporaryDirectory(prefix="gatetui-rtbench-") as tmp:
        repo = make_repo(Path(tmp), args.branches)
        for raw in args.caps.split(","):
            limit = None if raw == "none" else int(raw)
            measure(repo, Path(tmp), args.branches if limit is None else args.capped_branches, args.delay, limit)


if __name__ == "__main__":
    main()
