"""One gate of a repo made by `make_repo` (main against agent/x), for the
tests that attack or exercise the whole gate: its last event."""

from __future__ import annotations

import asyncio
from pathlib import Path

from gatetui.backends.base import Backend
from gatetui.backends.local import LocalBackend
from gatetui.gate.events import RunFinished
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate


def gate_with(repo: Path, backend: Backend) -> RunFinished:
    async def go() -> RunFinished:
        plan = make_plan(GateRequest(repo, "main", "agent/x"))
        events = [e async for e in run_gate(plan, backend)]
        assert isinstance(events[-1], RunFinished)
        return events[-1]

    return asyncio.run(go())


def gate_locally(repo: Path, work: Path, fork_mode: str | None = None) -> RunFinished:
    return gate_with(repo, LocalBackend(work_root=work, fork_mode=fork_mode))
