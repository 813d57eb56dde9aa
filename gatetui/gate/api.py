"""Gating once, from a caller outside the gate: the one way in.

`gatetui check`, standalone `gatetui submit` and the demo each gate one
change and print its verdict; they share `gate_once` and the exit code of
each verdict here rather than import one another (the CLI imports them,
never the other way round).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TextIO

from gatetui.backends.base import Backend
from gatetui.errors import BackendError, ExitCode
from gatetui.gate.checks import Verdict
from gatetui.gate.events import RunFinished, RunStarted
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from gatetui.render import Progress

VERDICT_EXIT = {
    Verdict.PASS: ExitCode.PASS,
    Verdict.FAIL: ExitCode.FAIL,
    Verdict.REVIEW: ExitCode.FAIL,
    Verdict.ERROR: ExitCode.GATE_ERROR,
}


async def gate_once(request: GateRequest, backend: Backend, progress: TextIO,
                    verbose: bool = False) -> tuple[RunStarted, RunFinished]:
    """Plan and run one gate, its progress as lines on `progress`; the
    run's start (what was judged) and its end (the verdict)."""
    plan = await asyncio.to_thread(make_plan, request)
    started: RunStarted | None = None
    show = Progress(progress, verbose)
    async with contextlib.aclosing(run_gate(plan, backend)) as events:
        async for event in events:
            show(event)
            if isinstance(event, RunStarted):
                started = event
            if isinstance(event, RunFinished):
                assert started is not None
                return started, event
    raise BackendError("the gate ended without a verdict")
