"""The runner's guarantees that no sample shows: a run stopped midway leaves
nothing behind, and a suite that hangs is stopped at its time limit."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from gatetui.backends.local import LocalBackend
from gatetui.gate.checks import CheckId, Status
from gatetui.gate.events import OutputChunk, RunFinished
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from tests.conftest import MakeRepo

LOCK = '{"name": "n", "version": "0.0.0", "lockfileVersion": 3, "requires": true, "packages": {"": {"name": "n", "version": "0.0.0"}}}\n'


def node_repo(make_repo: MakeRepo, test_body: str) -> Path:
    base = {
        "package.json": '{"name": "n", "version": "0.0.0", "scripts": {"test": "node --test"}}\n',
        "package-lock.json": LOCK,
        "test/a.test.js": "const test = require('node:test');\ntest('a', () => {});\n",
    }
    return make_repo(base, {"test/a.test.js": "const test = require('node:test');\n" + test_body})


def running(pid: int) -> bool:
    """Alive and not a zombie waiting for its reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_a_run_stopped_midway_leaves_no_process_and_no_directory(make_repo: MakeRepo, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    repo = node_repo(make_repo, (
        "const fs = require('node:fs');\n"
        f"test('a', async () => {{ fs.writeFileSync('{pids}/' + process.pid, ''); "
        "await new Promise(r => setTimeout(r, 60000)); });\n"
    ))
    work = tmp_path / "work"
    work.mkdir()

    async def go() -> None:
        plan = make_plan(GateRequest(repo, "main", "agent/x"))
        gate = run_gate(plan, LocalBackend(work_root=work))
        async for event in gate:
            if isinstance(event, OutputChunk) and event.stream == "run 1":
                deadline = time.monotonic() + 20
                while len(list(pids.iterdir())) < 3 and time.monotonic() < deadline:
                    await asyncio.sleep(0.1)
                break
        await gate.aclose()

    asyncio.run(go())
    started = [int(p.name) for p in pids.iterdir()]
    assert len(started) >= 3
    deadline = time.monotonic() + 5  # SIGKILL is delivered asynchronously
    while (alive := [pid for pid in started if running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive == []
    assert list(work.iterdir()) == []


def test_a_hanging_suite_fails_runs_at_the_time_limit(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = node_repo(make_repo, "test('a', async () => { await new Promise(r => setTimeout(r, 60000)); });\n")

    async def go() -> RunFinished:
        plan = make_plan(GateRequest(repo, "main", "agent/x", timeout=4))
        events = [e async for e in run_gate(plan, LocalBackend(work_root=tmp_path))]
        assert isinstance(events[-1], RunFinished)
        return events[-1]

    started = time.monotonic()
    done = asyncio.run(go())
    results = {r.id: r for r in done.results}
    assert results[CheckId.RUNS].status is Status.FAIL
    assert "run 1 stopped at its time limit after 4 s" in results[CheckId.RUNS].detail
    assert results[CheckId.INSTALL].status is Status.PASS
    assert time.monotonic() - started < 30
