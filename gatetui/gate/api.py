"""Asking for a gate, from a caller outside it: the one way in.

Every caller (`gatetui check`, standalone `gatetui submit`, the supervisor,
the demo, the lab) builds its request with `gate_request`, so they agree on
every default (the profile's timeout, base's sealing rules, no hidden tests
unless given) and a new input reaches them all at once. The callers that
gate one change and print its verdict share `gate_once` and the exit code
of each verdict here rather than import one another (the CLI imports them,
never the other way round).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from gatetui.backends.base import Backend
from gatetui.config import SealSettings
from gatetui.errors import BackendError, ExitCode
from gatetui.gate.checks import Verdict
from gatetui.gate.events import RunFinished, RunStarted
from gatetui.gate.judging.baseline import BaselineCache
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.render import Progress
from gatetui.gate.runner import run_gate

VERDICT_EXIT = {
    Verdict.PASS: ExitCode.PASS,
    Verdict.FAIL: ExitCode.FAIL,
    Verdict.REVIEW: ExitCode.FAIL,
    Verdict.ERROR: ExitCode.GATE_ERROR,
}


@dataclass(frozen=True)
class GateInputs:
    """What a gate takes from outside the repository. The caller reads it
    (the gate never opens the state directory): from the state directory
    (`state_inputs.gate_inputs`) or from a scenario (`lab.scenario_inputs`)."""

    hidden: Mapping[str, bytes] | None = field(default=None, repr=False)  # None: none were looked for
    hidden_from: str = ""  # the folder they were read from, named when it holds none
    baseline_cache: BaselineCache | None = field(default=None, repr=False)
    seal: SealSettings | None = None  # replaces base's sealing rules (the lab's --rules)
    random_seed: int | None = None  # replay a random-order run; None: drawn per run


NO_INPUTS = GateInputs()


def gate_request(
    repo: Path,
    base: str,
    head: str,
    inputs: GateInputs = NO_INPUTS,
    *,
    timeout: float | None = None,
    run_id: str | None = None,
) -> GateRequest:
    """The request every caller gates with: `timeout` None keeps the
    profile's, `run_id` None draws one."""
    request = GateRequest(
        Path(repo),
        base,
        head,
        timeout,
        seal=inputs.seal,
        hidden=inputs.hidden,
        hidden_from=inputs.hidden_from,
        baseline_cache=inputs.baseline_cache,
        random_seed=inputs.random_seed,
    )
    return request if run_id is None else replace(request, run_id=run_id)


async def gate_once(
    request: GateRequest, backend: Backend, progress: TextIO, verbose: bool = False
) -> tuple[RunStarted, RunFinished]:
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
