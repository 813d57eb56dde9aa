"""`bites`, judged without a sandbox: which mutants to try, each with the
tests to run over it and a time limit, and what their runs mean.

A mutant is tried on a changed line that some test passing at head ran
(run 2's coverage), over only those tests, so a run costs what those tests
cost. A line that ran only outside the tests (at import or collection) is
tried too: a test must still see it. One in a function's header (its
decorators, `def` line, defaults) over the tests that ran the function's
body; any other (module or class level, a body run only at import) over
the whole suite, stopping at its first failure. Whole-suite runs are the
costly ones: at most WHOLE_SUITE of them, within the cap. The time limit
comes from the tests' own durations in head's runs. A run stopped by it is
a `timeout`, told apart from a kill: it counts as caught, unless most
mutants only timed out (a test that spins when the answer differs, rather
than failing, would make every mutant "die" that way).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.diff.changed_code import ChangedCode
from gatetui.gate.judging import reruns
from gatetui.gate.judging.code_notes import ARROW, compact
from gatetui.gate.judging.results import SuiteRun
from gatetui.stacks.base import Reached
from gatetui.stacks.mutant_search import Found
from gatetui.stacks.mutation import Mutant, Mutate, pick
from gatetui.stacks.results import VERDICT, Report

MIN_SECONDS = 10.0  # a mutant's run at least: the runner's own start
WHOLE_SUITE = 4  # mutants tried over the whole suite at most (each costs about one of head's runs)
SLOWER = 3.0  # how much slower than its tests' own time a mutant's run may be
SHOWN = 3  # survivors named in the detail's first line
THOROUGH = 100  # inputs head's function returned on, before a survivor none told apart is likely equivalent
FEW = 8  # the same, where the search tried every input it could make


@dataclass(frozen=True)
class Trial:
    mutant: Mutant
    tests: tuple[str, ...]  # the function-level ids the run selects; none: the whole suite
    timeout: float


@dataclass(frozen=True)
class Chosen:
    trials: tuple[Trial, ...]
    untried: int  # mutants past the cap, or past WHOLE_SUITE
    why_none: str = ""  # when there are no trials
    bounded: int = 0  # of the untried, the whole-suite mutants once WHOLE_SUITE were chosen


class Outcome(str, Enum):
    KILLED = "killed"
    SURVIVED = "survived"
    TIMEOUT = "timeout"  # stopped by its time limit, no test failed
    UNJUDGED = "unjudged"  # the run never ran the tests asked (a usage error, none collected)
    SPURIOUS = "spurious"  # killed only by tests that fail without the mutant too (phases/control.py)


def choose(
    changed: ChangedCode, reached: Reached, runs: list[SuiteRun], mutate: Mutate, cap: int, limit: float
) -> Chosen:
    """The mutants of changed lines that ran, at most `cap`, each with its tests."""
    tests = audiences(changed, reached, passing_tests(runs))
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
    whole = {key for key, ids in tests.items() if not ids}
    chosen, untried = pick(per_line, cap, whole, WHOLE_SUITE)
    tried_whole = sum(1 for m in chosen if (m.path, m.line) in whole)
    left = sum(len(per_line.get(key, [])) for key in whole) - tried_whole if tried_whole == WHOLE_SUITE else 0
    seconds = durations(runs)
    overhead = startup(runs)
    suite = tuple(seconds)  # a whole-suite run's limit: every test's time
    trials = tuple(
        Trial(m, ids := tests[(m.path, m.line)], time_limit(ids or suite, seconds, overhead, limit)) for m in chosen
    )
    return Chosen(trials, untried, bounded=left)


def audiences(
    changed: ChangedCode, reached: Reached, passing: frozenset[str]
) -> dict[tuple[str, int], tuple[str, ...]]:
    """The tests that judge each changed line's mutants: the passing ones
    that ran it; for a line that ran only outside the tests, the passing
    ones that ran its function's body when it is a header line, else ()
    (the whole suite). A line that never ran, or ran only under tests that
    fail at head, has none."""
    out: dict[tuple[str, int], tuple[str, ...]] = {}
    for path, line in changed.pairs():
        found = reached.get((path, line))
        if found is None:
            continue
        if found:
            if found & passing:
                out[(path, line)] = functions(found & passing)
            continue
        body = changed.headers.get(path, {}).get(line)
        out[(path, line)] = functions(body_tests(reached, path, body) & passing) if body else ()
    return out


def body_tests(reached: Reached, path: str, body: tuple[int, int]) -> frozenset[str]:
    """The tests that ran any line from body[0] to body[1] of a file."""
    found: set[str] = set()
    for (where, line), tests in reached.items():
        if where == path and body[0] <= line <= body[1]:
            found |= tests
    return frozenset(found)


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
    their function (gate/judging/reruns.py), at most reruns.MAX_TESTS."""
    return tuple(sorted({reruns.PARAMS.sub("", i) for i in ids}))[: reruns.MAX_TESTS]


def durations(runs: list[SuiteRun]) -> dict[str, float]:
    """Each function's slowest time in head's runs (its cases summed)."""
    slowest: dict[str, float] = {}
    for report in (run.report for run in runs if run.report is not None):
        per_run: dict[str, float] = {}
        for test_id, result in report.tests.items():
            name = reruns.PARAMS.sub("", test_id)
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
    """Killed: a test failed, or the run broke without a passing report.
    Timeout: the run hit its limit before any test failed. Survived: every
    test asked passed. Unjudged: the tests asked never ran (the runner
    refused, or collected none)."""
    report = run.report
    if report is not None and report.failed():
        return Outcome.KILLED
    if run.result.timed_out:
        return Outcome.TIMEOUT
    if report is not None and run.result.ok and report.passed_all:
        return Outcome.SURVIVED
    if (
        run.result.exit_code in cannot_start
        or report is None
        and run.result.exit_code == 0
        or report is not None
        and not report.tests
    ):
        return Outcome.UNJUDGED
    return Outcome.KILLED


def failing(run: SuiteRun) -> tuple[str, ...]:
    """The tests that failed or errored in a run, by their function."""
    if run.report is None:
        return ()
    return functions(test_id for test_id, result in run.report.tests.items() if VERDICT[result.outcome] == "fail")


def judge_bites(
    trials: tuple[Trial, ...],
    outcomes: list[Outcome],
    untried: int,
    bounded: int = 0,
    found: Mapping[int, Found] | None = None,
) -> CheckResult:
    """Killed of tried (and timed out, apart), each survivor's one-line
    diff, the count not tried. Timeouts count as caught, unless they are
    most of the tried: then no test failed on most mutants, it only ran
    on, and a person looks. A survivor the search (`found`) told apart is
    shown with the input that does it; one it searched thoroughly without
    telling it apart is likely equivalent: named, and no review."""
    found = found or {}
    equivalent = [i for i, o in enumerate(outcomes) if o is Outcome.SURVIVED and _equivalent(found.get(i))]
    survivors = [
        t.mutant.diff_line()
        for i, (t, o) in enumerate(zip(trials, outcomes))
        if o is Outcome.SURVIVED and i not in equivalent
    ]
    unjudged = [t.mutant.diff_line() for t, o in zip(trials, outcomes) if o is Outcome.UNJUDGED]
    spurious = [t.mutant.diff_line() for t, o in zip(trials, outcomes) if o is Outcome.SPURIOUS]
    timeouts = [t.mutant.diff_line() for t, o in zip(trials, outcomes) if o is Outcome.TIMEOUT]
    killed = outcomes.count(Outcome.KILLED)
    head = f"{killed} of {len(trials)} mutants killed" + (f", {len(timeouts)} timed out" if timeouts else "")
    head += f", {len(equivalent)} likely equivalent (no input told it apart)" if equivalent else ""
    tail = _untried(untried, bounded)
    spun = 2 * len(timeouts) > len(trials)
    alike = [f"likely equivalent: {trials[i].mutant.diff_line()}" for i in equivalent]
    if not survivors and not unjudged and not spurious and not spun:
        return CheckResult(CheckId.BITES, Status.PASS, "\n".join([f"{head}{tail}", *alike]))
    parts = [
        f"{len(survivors)} survived: {'; '.join(survivors[:SHOWN])}" if survivors else "",
        f"{len(unjudged)} could not be judged (their tests did not run)" if unjudged else "",
        f"{len(spurious)} killed only by tests that fail without the mutant too, in a run set up as a mutant's"
        if spurious
        else "",
    ]
    more = f" (and {len(survivors) - SHOWN} more)" if len(survivors) > SHOWN else ""
    named = survivors or unjudged or spurious
    first = f"{head}, {', '.join(p for p in parts if p)}{more}{tail}" if named else f"{head}{tail}"
    if spun:
        first = (
            f"most mutants only timed out: {first} (a test that runs on when the answer is wrong, "
            "rather than failing, stops every mutant this way)"
        )
    lines = [f"survived: {s}" for s in survivors] + _told_apart(trials, found)
    lines += [f"not judged: {u}" for u in unjudged + spurious] + ([f"timed out: {t}" for t in timeouts] if spun else [])
    return CheckResult(CheckId.BITES, Status.REVIEW, "\n".join([first, *lines, *alike]))


def _equivalent(found: Found | None) -> bool:
    """Searched, nothing told it apart, and head's function returned on
    enough inputs to say so: THOROUGH of them, or FEW where those were
    every input the search could make (a narrow span of small numbers)."""
    if found is None or found.call:
        return False
    return found.returned >= THOROUGH or found.every and found.returned >= FEW


def _told_apart(trials: tuple[Trial, ...], found: Mapping[int, Found]) -> list[str]:
    """The test each survivor lacks, as the search found it: the input,
    head's result, and the result with the mutant's words (the words it
    changed, as the review screen shows them)."""
    lines = []
    for index, f in sorted(found.items()):
        if f.call:
            m = trials[index].mutant
            words = compact(m.before, m.after or "(removed)").split(ARROW)[1]
            lines.append(
                f"told apart: {m.path}:{m.line}: {f.call} gives {f.here} here, {f.there} with "
                f"`{words}`; no test checks it"
            )
    return lines


def _untried(untried: int, bounded: int) -> str:
    """Why some mutants were not tried: the cap, the bound on whole-suite runs, or both."""
    whole = f"at most {WHOLE_SUITE} mutants run the whole suite"
    why = "mutant_cap" if not bounded else whole if bounded == untried else f"mutant_cap, and {whole}"
    return f"; {untried} not tried ({why})" if untried else ""
