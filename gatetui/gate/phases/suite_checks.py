"""What the suite's runs say, check by check, once every run has ended:
`runs` (strictly, or against base's own failures), `old_tests` (defended
against a verdict bent from outside the tests), and the second halves of
`tests_kept` and `no_new_skips` that compare base's tests with head's runs."""

from __future__ import annotations

from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.judging import refused_start, results
from gatetui.gate.judging.results import SuiteRun
from gatetui.gate.phases.base_own import BaseOwn
from gatetui.gate.phases.context import Context
from gatetui.gate.reports.test_ids import case_family

CANNOT_START = "not judged: the suite cannot start, at base either (see runs)"


async def judge_suite(ctx: Context, base: BaseOwn, runs: list[SuiteRun], old: SuiteRun) -> None:
    if await _cannot_start(ctx, base, [*runs, old]):
        return
    runs, old = await base.judge_runs(runs, old)
    _old_tests(ctx, runs, old)
    await _second_halves(ctx, base, runs, old)


async def _cannot_start(ctx: Context, base: BaseOwn, runs: list[SuiteRun]) -> bool:
    """Every run refused to start, and base's own suite refuses too: the
    project's setup, not the change; nothing else is judged."""
    if not refused_start.refused(runs, ctx.plan.profile.suite.cannot_start):
        return False
    at_base = await base.refused_at_base()
    if not at_base:
        return False
    ctx.ledger.finish(CheckResult(CheckId.RUNS, Status.ERROR, at_base))
    ctx.ledger.error_open(CANNOT_START)
    return True


def _old_tests(ctx: Context, runs: list[SuiteRun], old: SuiteRun) -> None:
    """Base's tests on head's code, made a hard failure where the evidence
    says head bent the verdict (remembered in ctx.outside for the policy)."""
    ctx.outside = results.passed_outside_tests(old, runs, ctx.test_file_unchanged)
    digests = ctx.plan.digests
    verdict = results.judge_old_tests(old, digests.sealed_changed, digests.judge_changed, ctx.plan.forbidden)
    bent = ctx.plan.links_out + ctx.hooks.findings + ctx.hooks.reaches
    ctx.ledger.finish(results.defend_old_tests(verdict, bent, ctx.outside))


async def _second_halves(ctx: Context, base: BaseOwn, runs: list[SuiteRun], old: SuiteRun) -> None:
    """The answers the diff could not give (a failure from the diff stands,
    said once); a skip seen only under base's tests asks base's own suite."""
    said = ctx.ledger.results
    kept, skips = results.second_halves(
        said.get(CheckId.TESTS_KEPT),
        said.get(CheckId.NO_NEW_SKIPS),
        old,
        runs,
        ctx.plan.still_defined,
        case_family(ctx.plan.profile.reports.ids),
    )
    if skips.status is Status.PASS and results.skipped_anywhere([old]):  # head-only skips are caught above
        skips = await base.skips_against_base(skips, [*runs, old])
    ctx.ledger.finish_open((kept, skips))
