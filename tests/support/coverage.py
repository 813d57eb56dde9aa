"""What `covered` and `bites` answer from a plan alone, before any sandbox
runs."""

from __future__ import annotations

from pathlib import Path

from gatetui.backends.local import LocalBackend
from gatetui.gate.checks import CheckId, CheckResult
from gatetui.gate.phases.context import Context
from gatetui.gate.phases.coverage import answer
from gatetui.gate.phases.ledger import Ledger
from gatetui.gate.plan import GateRequest, make_plan


def plan_answers(repo: Path) -> list[CheckResult | str]:
    plan = make_plan(GateRequest(repo, "main", "agent/x"))
    ctx = Context.of(plan, LocalBackend(), Ledger(lambda event: None, 60.0, False))
    return [answer(ctx, check) for check in (CheckId.COVERED, CheckId.BITES)]
