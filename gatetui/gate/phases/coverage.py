"""`covered`: which test runs each library line head changed, measured in
one of head's three runs (never a fourth).

Run 2 is the measured one: run 1 is followed by the reruns in its copy,
run 3 may be the random-order one. The stack's plugin (LineCoverage) is
written into run 2's copy with the files to measure; its report is read
back as hostile input, and what it says also tells `bites` which tests
reach which line. A report that is missing or unreadable asks a person:
head's code runs in that process and could have removed it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from gatetui.backends.base import Workspace
from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.diff.changed_code import ChangedCode, ranges
from gatetui.gate.phases.context import Context
from gatetui.gate.phases.one_run import SuiteRunner
from gatetui.stacks.base import LineCoverage, Reached, ReportProblem

MEASURED_RUN = 1  # run 2, by index
NOT_HERE = "not available for this stack"
NOTHING = "no library line changed"
WAITING = "waiting for the runs"
SHOWN = 12  # ranges named in the detail's first line
MAX_WORKERS = 256  # parallel workers' reports read at most


def answer(ctx: Context, check: CheckId) -> CheckResult | str:
    """What `covered` and `bites` can say with the plan: skipped when the
    stack cannot measure or head changed no library statement."""
    if ctx.changed is None:
        return CheckResult(check, Status.SKIPPED, NOT_HERE)
    if not ctx.changed.lines:
        left_out = ctx.changed.left_out()
        return CheckResult(check, Status.SKIPPED, f"{NOTHING}; {left_out}" if left_out else NOTHING)
    return WAITING


class CoverageRun:
    """Run 2's measurement: the plugin in, the report out, `covered` judged."""

    def __init__(self, ctx: Context, runner: SuiteRunner):
        self.ctx, self.runner = ctx, runner
        self.reached: Reached | None = None
        self.problem = ""

    @property
    def probe(self) -> LineCoverage | None:
        return self.ctx.plan.profile.lines.coverage

    @property
    def changed(self) -> ChangedCode:
        return self.ctx.changed or ChangedCode()

    def wanted(self) -> bool:
        """Whether a check still waits for the measurement."""
        open_ids = {spec.id for spec in self.ctx.ledger.open()}
        return bool(self.changed.lines) and bool(open_ids & {CheckId.COVERED, CheckId.BITES})

    async def env(self, workspace: Workspace) -> dict[str, str]:
        """The plugin written into run 2's copy; the environment that loads it."""
        probe = self.probe
        if probe is None or not self.wanted():
            return {}
        self.ctx.ledger.time_from_now(CheckId.COVERED)
        return await self.runner.plugin(
            workspace,
            probe.plugin,
            report=workspace.report_path(probe.report),
            files=json.dumps(sorted(self.changed.files)),
        )

    async def read(self, workspace: Workspace) -> None:
        """Run 2's report, once its run has ended; `covered` answered."""
        probe = self.probe
        if probe is None or not self.wanted():
            return
        raw = await workspace.read_report(probe.report)
        if raw is None:
            self.problem = "run 2 wrote no coverage report"
        else:
            try:
                texts = self.changed.texts
                self.reached = merged(
                    [probe.read(raw, texts), *[probe.read(r, texts) async for r in workers(workspace, probe)]]
                )
            except ReportProblem as err:
                self.problem = str(err)
        self.ctx.ledger.finish_open([judge_covered(self.changed, self.reached, self.problem)])


async def workers(workspace: Workspace, probe: LineCoverage) -> AsyncIterator[bytes]:
    """The reports of the run's parallel workers (pytest-xdist's gw0, gw1, ...), until one is missing."""
    for index in range(MAX_WORKERS):
        raw = await workspace.read_report(f"{probe.report}.gw{index}")
        if raw is None:
            return
        yield raw


def merged(parts: list[Reached]) -> Reached:
    """Every line any part saw, with the tests of all of them."""
    out: dict[tuple[str, int], frozenset[str]] = {}
    for part in parts:
        for key, tests in part.items():
            out[key] = out.get(key, frozenset()) | tests
    return out


def judge_covered(changed: ChangedCode, reached: Reached | None, problem: str) -> CheckResult:
    """Every changed statement ran inside some test, or the ones that ran
    under none, by file and line ranges. A line that ran only outside the
    tests (at import, at collection) is not missed, but it proves nothing
    about them: it is counted apart, and `bites` judges it."""
    if reached is None:
        return CheckResult(CheckId.COVERED, Status.REVIEW, f"coverage not measured: {problem}")
    missed: dict[str, list[int]] = {}
    for path, line in changed.pairs():
        if (path, line) not in reached:
            missed.setdefault(path, []).append(line)
    total, left_out = changed.count(), f"; {changed.left_out()}" if changed.outside else ""
    outside = outside_tests(changed, reached)
    if not missed:
        tests = len({t for key in changed.pairs() for t in reached.get(key, frozenset())})
        return CheckResult(
            CheckId.COVERED, Status.PASS, f"all {total} changed lines run, {_ran(total, outside, tests)}{left_out}"
        )
    named = [f"{path}:{span}" for path in sorted(missed) for span in ranges(missed[path])]
    more = f" and {len(named) - SHOWN} more" if len(named) > SHOWN else ""
    count = sum(len(lines) for lines in missed.values())
    also = f", {_at_import(outside)}" if outside else ""
    detail = f"{count} of {total} changed lines run under no test: {', '.join(named[:SHOWN])}{more}{also}{left_out}"
    return CheckResult(CheckId.COVERED, Status.REVIEW, "\n".join([detail, *_shown(changed, missed)]))


def outside_tests(changed: ChangedCode, reached: Reached) -> int:
    """The changed lines that ran, but only outside any test."""
    return sum(1 for key in changed.pairs() if key in reached and not reached[key])


def _ran(total: int, outside: int, tests: int) -> str:
    if not outside:
        return f"under {tests} tests"
    return _at_import(outside) if outside == total else f"{total - outside} under {tests} tests, {_at_import(outside)}"


def _at_import(count: int) -> str:
    return f"{count} only at import or collection (bites judges them)"


def _shown(changed: ChangedCode, missed: dict[str, list[int]]) -> list[str]:
    """The lines themselves, for the whole detail (the review screen, -v)."""
    out: list[str] = []
    for path in sorted(missed):
        text = changed.texts.get(path, "").split("\n")
        out += [f"{path}:{line}: {text[line - 1].strip()}" for line in missed[path][:50] if line <= len(text)]
    return out
