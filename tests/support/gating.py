"""One gate of a repo made by `make_repo` (main against agent/x), for the
tests that attack or exercise the whole gate: its last event.

The local gates keep their dependency layers in one store per test process,
as `gatetui check` keeps them in one cache folder: a layer (pytest, its
bytecode) is built by the first gate that needs it and verified at every
later use, so each attack is judged by the gate as users run it.

A gate run's processes are found by their uids (`gate_uid_pids`), so a
test can hold that none outlives its run."""

from __future__ import annotations

import asyncio
import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path

from gatetui.backends.base import Backend
from gatetui.backends.local import LocalBackend, uid_range_from_env
from gatetui.gate.events import GateEvent, RunFinished
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate


def gate_events(repo: Path, backend: Backend) -> list[GateEvent]:
    """Every event of one gate, the last its RunFinished."""

    async def go() -> list[GateEvent]:
        plan = make_plan(GateRequest(repo, "main", "agent/x"))
        events = [e async for e in run_gate(plan, backend)]
        assert isinstance(events[-1], RunFinished)
        return events

    return asyncio.run(go())


def gate_with(repo: Path, backend: Backend) -> RunFinished:
    finished = gate_events(repo, backend)[-1]
    assert isinstance(finished, RunFinished)
    return finished


@cache
def shared_layers() -> Path:
    """This test process's layer store, removed when it exits."""
    folder = Path(tempfile.mkdtemp(prefix="gatetui-test-layers-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder / "layers"


def gate_locally(repo: Path, work: Path, fork_mode: str | None = None) -> RunFinished:
    return gate_with(repo, LocalBackend(work_root=work, fork_mode=fork_mode, layers=shared_layers()))


def gate_uid_pids() -> list[int]:
    """Processes of any gate run's uid (the isolated local backend) in this
    session's range (each pytest-xdist worker has its own)."""
    first, count = uid_range_from_env()
    return [
        int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _uid_of(p) in range(first, first + count)
    ]


def _uid_of(proc: Path) -> int:
    try:
        return proc.stat().st_uid
    except OSError:
        return -1
