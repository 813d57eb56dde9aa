"""The checks announced with the plan (Phase.PLAN), answered before any
sandbox starts wherever the diff or the plan can: a test definition lost,
a skip marker added, hidden tests not configured. The rest of their answer
waits for the runs; a failure found here is said once, now."""

from __future__ import annotations

from collections.abc import Callable

from gatetui.gate.checks import CheckId, CheckResult, Phase, Status, announced_at
from gatetui.gate.judging import results
from gatetui.gate.phases import coverage
from gatetui.gate.phases.context import Context

Answer = CheckResult | str  # a final result, or what the check waits for
WAITING = "waiting for the runs"


def announce(ctx: Context) -> None:
    """Each check declared for the plan, in the gate's order: started,
    then answered or told what it waits for."""
    for spec in announced_at(Phase.PLAN):
        answer = ANSWERS[spec.id](ctx)
        ctx.ledger.start(spec.id)
        if isinstance(answer, CheckResult):
            ctx.ledger.finish(answer)
        else:
            ctx.ledger.progress(spec.id, answer)


def tests_kept(ctx: Context) -> Answer:
    scan = ctx.plan.scan
    found = results.diff_tests_kept(scan)
    return found or f"diff: {len(scan.removed)} removed, {len(scan.added)} added; {WAITING}"


def no_new_skips(ctx: Context) -> Answer:
    """A marker in the diff, else a skip head's library code raises (the
    stack's hook scan): base's tests would skip too, so only the diff sees it."""
    found = results.diff_no_new_skips(ctx.plan.scan)
    if found is None and ctx.hooks.skips:
        found = results.skips_in_code(ctx.hooks.skips)
    return found or f"diff: no marker added; {WAITING}"


def hidden(ctx: Context) -> Answer:
    """Answered now unless there are hidden tests to run: not configured
    is skipped; configured with nothing to run is the gate's error (a
    gate that was meant to run hidden tests must not pass without)."""
    plan = ctx.plan
    if plan.policy.hidden is None:
        return CheckResult(CheckId.HIDDEN, Status.SKIPPED, "not configured")
    if plan.hidden is None:
        return CheckResult(CheckId.HIDDEN, Status.ERROR, plan.hidden_problem)
    return "waiting for the install"


# What each check announced with the plan can say then (a test holds it to the registry).
ANSWERS: dict[CheckId, Callable[[Context], Answer]] = {
    CheckId.TESTS_KEPT: tests_kept,
    CheckId.NO_NEW_SKIPS: no_new_skips,
    CheckId.HIDDEN: hidden,
    CheckId.COVERED: lambda ctx: coverage.answer(ctx, CheckId.COVERED),
    CheckId.BITES: lambda ctx: coverage.answer(ctx, CheckId.BITES),
}
