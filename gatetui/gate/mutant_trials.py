"""`bites`, judged without a sandbox: which mutants to try, each with the
tests to run over it and a time limit, and what their runs mean.

A mutant is tried only on a changed line that some test passing at head
reached (run 2's coverage); only those tests run over it, so a run costs
what those tests cost. The time limit comes from their own durations in
head's runs: a mutant that makes a loop endless is stopped and counts as
caught.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

from gatetui.gate import rerun
from gatetui.gate.changed_code import ChangedCode
from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.judge import SuiteRun
from gatetui.stacks.base import Reached
from gatetui.stacks.mutation import Mutant, Mutate, pick
from gatetui.stacks.results import VERDICT, Report

MIN_SECONDS = 10.0  # a mutant's run at least: the runner's own start
SLOWER = 3.0  # how much slower than its tests' own time a mutant's run may be
SHOWN = 3  # survivors named in the detail's first line


@dataclass(frozen=True)
class Trial:
    mutant: Mutant
    tests: tuple[str, ...]  # the function-level ids the run selects
    timeout: float


@dataclass(frozen=True)
class Chosen:
    trials: tuple[Trial, ...]
    untried: int  # mutants past the cap
    why_none: str = ""  # when there are no trials


class Outcome(str, Enum):
    KILLED = "killed"
    SURVIVED = "survived"
    UNJUDGED = "unjudged"  # the run never ran the tests asked (a usage error, none collected)


def choose(changed: ChangedCode, reached: Reached, runs: list[SuiteRun], mutate: Mutate, cap: int,
           limit: float) -> Chosen:
    """The mutants of reached lines, at most `cap`, each with its tests."""
    passing = passing_tests(runs)
    tests = {key: sorted(found & passing) for key in changed.pairs() if (found := reached.get(key))}
    tests = {key: ids for key, ids in tests.items() if ids}
    if not tests:
        return Chosen((), 0, "no changed line is reached by a test that passes at head")
    per_line: dict[tuple[str, int], list[Mutant]] = {}
    for path in sorted({path for path, _ in tests}):
        lines = frozenset(line for p, line in tests if p == path)
        for mutant in mutate(path, changed.texts[path], lines):
            if (path, mutant.line) in tests:
                per_line.setdefault((path, mutant.line), []).append(mutant)
    if not per_line:
        return Chosen((), 0, "the changed lines give no mutant (nothing on them can change behaviour)")
    if cap <= 0:
        return Chosen((), 0, "mutant_cap is 0")
    chosen, untried = pick(per_line, cap)
    seconds = durations(runs)
    overhead = startup(runs)
    trials = tuple(Trial(m, ids := functions(tests[(m.path, m.line)]), time_limit(ids, seconds, overhead, limit))
                   for m in chosen)
    return Chosen(trials, untried)


def passing_tests(runs: list[SuiteRun]) -> frozenset[str]:
    """Tests that passed in every head run that reported them, and in one at least."""
    reports = [run.report for run in runs if run.report is not None]
    verdicts: dict[str, set[str]] = {}
    for report in reports:
        for test_id, result in report.tests.items():
            verdicts.setdefault(test_id, set()).add(VERDICT[result.outcome])
    return frozenset(test_id for test_id, seen in verdicts.items() if seen == {"pass"})


def functions(ids: Iterable[str]) -> tuple[str, ...]:
    """The ids a runner takes on its command line: parametrized cases by
    their function (gate/rerun.py), at most rerun.MAX_TESTS."""
    return tuple(sorted({rerun.PARAMS.sub("", i) for i in ids}))[:rerun.MAX_TESTS]


def durations(runs: list[SuiteRun]) -> dict[str, float]:
    """Each function's slowest time in head's runs (its cases summed)."""
    slowest: dict[str, float] = {}
    for report in (run.report for run in runs if run.report is not None):
        per_run: dict[str, float] = {}
        for test_id, result in report.tests.items():
            name = rerun.PARAMS.sub("", test_id)
            per_run[name] = per_run.get(name, 0.0) + max(result.seconds, 0.0)
        for name, seconds in per_run.items():
            slowest[name] = max(slowest.get(name, 0.0), seconds)
    return slowest


def startup(runs: list[SuiteRun]) -> float:
    """The longest a head run spent outside its tests: the runner's start, collection."""
    spent = [run.result.wall_seconds - _total(run.report) for run in runs if run.report is not None]
    return max([0.0, *spent])


def _total(report: Report) -> float:
    return sum(max(r.seconds, 0.0) for r in report.tests.values())


def time_limit(tests: Iterable[str], seconds: Mapping[str, float], overhead: float, limit: float) -> float:
    own = sum(seconds.get(t, 0.0) for t in tests)
    return round(min(limit, max(MIN_SECONDS, SLOWER * (own + overhead))), 1)


def outcome(run: SuiteRun, cannot_start: tuple[int, ...]) -> Outcome:
    """Killed: a test failed, the run hit its limit, or it broke without a
    passing report. Survived: every test asked passed. Unjudged: the tests
    asked never ran (the runner refused, or collected none)."""
    if run.result.timed_out:
        return Outcome.KILLED
    report = run.report
    if report is not None and report.failed():
        return Outcome.KILLED
    if report is not None and run.result.ok and report.passed_all:
        return Outcome.SURVIVED
    if run.result.exit_code in cannot_start or report is None and run.result.exit_code == 0 \
            or report is not None and not report.tests:
        return Outcome.UNJUDGED
    return Outcome.KILLED


def judge_bites(trials: tuple[Trial, ...], outcomes: list[Outcome], untried: int) -> CheckResult:
    """Killed of tried, each survivor's one-line diff, the count not tried."""
    survivors = [t.mutant.diff_line() for t, o in zip(trials, outcomes) if o is Outcome.SURVIVED]
    unjudged = [t.mutant.diff_line() for t, o in zip(trials, outcomes) if o is Outcome.UNJUDGED]
    killed = outcomes.count(Outcome.KILLED)
    tail = f"; {untried} not tried (mutant_cap)" if untried else ""
    if not survivors and not unjudged:
        return CheckResult(CheckId.BITES, Status.PASS, f"{killed} of {len(trials)} mutants killed{tail}")
    head = f"{killed} of {len(trials)} mutants killed"
    parts = [f"{len(survivors)} survived: {'; '.join(survivors[:SHOWN])}" if survivors else "",
             f"{len(unjudged)} could not be judged (their tests did not run)" if unjudged else ""]
    more = f" (and {len(survivors) - SHOWN} more)" if len(survivors) > SHOWN else ""
    first = f"{head}, {', '.join(p for p in parts if p)}{more}{tail}"
    lines = [f"survived: {s}" for s in survivors] + [f"not judged: {u}" for u in unjudged]
    return CheckResult(CheckId.BITES, Status.REVIEW, "\n".join([first, *lines]))
