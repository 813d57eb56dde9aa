"""Turn what the runs produced into check results. Pure: no I/O.

Each function takes the evidence of one check (the diff scan, the reports
of the head's runs and of the base-tests run) and says pass or fail with a
detail that names the file and test, so an agent can act on it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from gatetui.backends.base import CommandResult
from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.diff.scan import DiffScan
from gatetui.gate.judging import fresh, random_order, reruns
from gatetui.gate.reports import junit
from gatetui.stacks.base import Finding

LIST_MAX = 5
PARAMS_SHOWN = 3  # parameters shown per parametrized test in a listing


def listing(items: Sequence[str], limit: int = LIST_MAX) -> str:
    """At most `limit` names, then how many more; a parametrized test's ids
    are one name with its parameters (`t.py::test_x[1, 2 and 40 more]`): 40
    ids of one test made a 600-character detail that said less."""
    groups = _param_groups(items)
    shown = ", ".join(_group_text(name, params) for name, params in groups[:limit])
    more = sum(max(1, len(params)) for _, params in groups[limit:])
    return shown + (f" and {more} more" if more else "")


def _param_groups(items: Sequence[str]) -> list[tuple[str, list[str]]]:
    """(name, parameters) in first-seen order; an id without `[...]` has none."""
    groups: dict[tuple[str, bool], list[str]] = {}
    for item in items:
        name, bracket, rest = item.partition("[")
        if bracket and rest.endswith("]"):
            groups.setdefault((name, True), []).append(rest[:-1])
        else:
            groups.setdefault((item, False), [])
    return [(name, params) for (name, _), params in groups.items()]


def _group_text(name: str, params: list[str]) -> str:
    if not params:
        return name
    if len(params) == 1:
        return f"{name}[{params[0]}]"
    extra = f" and {len(params) - PARAMS_SHOWN} more" if len(params) > PARAMS_SHOWN else ""
    return f"{name}[{', '.join(params[:PARAMS_SHOWN])}{extra}]"


@dataclass(frozen=True)
class SuiteRun:
    """One run of the suite: how the command ended and what it reported."""

    name: str  # "run 1", "old tests"
    result: CommandResult
    report: junit.Report | None
    report_problem: str = ""  # why there is no report
    tolerated: frozenset[str] = frozenset()  # failures base already had (baseline = true)
    seed: int | None = None  # the random-order run's seed
    order: str = ""  # how a run out of source order went ("reverse order"; stacks/order.py)
    reruns: SuiteRun | None = None  # run 1's reruns of head's new and changed tests (gate/judging/reruns.py)
    confirmed: tuple[fresh.Confirmation, ...] = ()  # the reruns' failures, run again in fresh processes

    @property
    def label(self) -> str:
        if self.seed is not None:
            return f"{self.name} (random order, seed {self.seed})"
        return f"{self.name} ({self.order})" if self.order else self.name

    @property
    def in_source_order(self) -> bool:
        return self.seed is None and not self.order

    def new_failures(self) -> list[str]:
        """Failed and errored tests that base did not already fail."""
        if self.report is None:
            return []
        return [t.id for t in self.report.failed() if t.id not in self.tolerated]

    @property
    def passed(self) -> bool:
        """Strict: exit 0 and a report where something passed and nothing
        failed. With tolerated failures, a non-zero exit is pytest's answer
        to them, and the run passes when they are its only failures."""
        if self.report is None or self.result.timed_out or self.report.findings or self.new_failures():
            return False
        if self.result.ok or not self.report.failed():
            return self.result.ok and self.report.passed_all
        return self._something_passed()

    def _something_passed(self) -> bool:
        passing = (junit.Outcome.PASSED, junit.Outcome.XPASSED)
        return self.report is not None and any(t.outcome in passing for t in self.report.tests.values())

    def failure(self) -> str:
        """Why this run did not pass, in one phrase."""
        if self.result.timed_out:
            return f"{self.label} {self.result.describe_end()}"
        if self.report is None:
            return f"{self.label} wrote no test report ({self.report_problem}; {self.result.describe_end()})"
        failed = self.new_failures()
        broken = {i: why for i, why in junit.uncollected([self.report]).items() if i in failed}
        if broken:
            return f"{self.label}: {listing(list(broken))} could not be collected ({first_reason(broken)})"
        if self.report.findings:
            return f"{self.label}: {_findings(self.report.findings)}"
        if failed:
            return f"{self.label}: {listing(failed)} failed"
        if not self._something_passed():
            return f"{self.label} ran no test that passed ({len(self.report.tests)} collected)"
        return f"{self.label} ended with {self.result.describe_end()} although every test passed"


def _findings(findings: Sequence[str]) -> str:
    """The most telling of what the report's shape gave away, and how many more."""
    more = f" (and {len(findings) - 1} more {'finding' if len(findings) == 2 else 'findings'})"
    return findings[0] + (more if len(findings) > 1 else "")


def first_reason(broken: dict[str, str]) -> str:
    """Why the first file failed to collect, naming it when there are more."""
    first = next(iter(broken))
    return broken[first] if len(broken) == 1 else f"{first}: {broken[first]}"


def diff_tests_kept(scan: DiffScan) -> CheckResult | None:
    """The first half: a net loss of test definitions fails at once."""
    removed, added = len(scan.removed), len(scan.added)
    if added >= removed:
        return None
    names = [f"{d.path}::{d.name}" for d in scan.removed]
    return CheckResult(CheckId.TESTS_KEPT, Status.FAIL, f"{removed} removed, {added} added: {listing(names)}")


def diff_no_new_skips(scan: DiffScan) -> CheckResult | None:
    if not scan.markers:
        return None
    first = scan.markers[0]
    more = f" (+{len(scan.markers) - 1} more)" if len(scan.markers) > 1 else ""
    return CheckResult(CheckId.NO_NEW_SKIPS, Status.FAIL, f"+ {first.text} at {first.path}:{first.line}{more}")


def judge_runs(runs: Sequence[SuiteRun]) -> CheckResult:
    failing = [r for r in runs if not r.passed]
    reports = [r.report for r in runs if r.report is not None]
    flaky = junit.flaky(reports)
    if not failing:
        return CheckResult(CheckId.RUNS, Status.PASS, f"{len(runs)} of {len(runs)} runs passed")
    detail = f"{len(runs) - len(failing)} of {len(runs)} passed{_unsteady(runs, flaky)}; {failing[0].failure()}"
    shuffled = next((r for r in runs if r.seed is not None), None)
    if shuffled is not None and shuffled is not failing[0] and (flaky or shuffled.passed):
        detail += f"; {shuffled.name} ran in random order (seed {shuffled.seed})"
    return CheckResult(CheckId.RUNS, Status.FAIL, detail)


def _unsteady(runs: Sequence[SuiteRun], flaky: list[str]) -> str:
    """The tests that failed in some runs only: order-dependent where they
    failed only out of source order (random_order.py), flaky otherwise."""
    in_order = [r.report for r in runs if r.in_source_order and r.report is not None]
    reordered = [r.report for r in runs if not r.in_source_order and r.report is not None]
    ordered = random_order.order_dependent(in_order, reordered, flaky)
    named = [f"order-dependent {listing([_after(t, b) for t, b in ordered.items()])}"] if ordered else []
    rest = [t for t in flaky if t not in ordered]
    named += [f"flaky {listing(rest)}"] if rest else []
    return f": {'; '.join(named)}" if named else ""


def _after(test: str, before: str | None) -> str:
    return test if before is None else f"{test} (passes only after {before.rsplit('::', 1)[-1]})"


def with_reruns(result: CheckResult, runs: Sequence[SuiteRun], tolerated: frozenset[str] = frozenset()) -> CheckResult:
    """A `runs` pass stands only if the reruns of head's new and changed
    tests passed too: a test failing in any of them is flaky (but for the
    failures base already had, with the baseline), unless fresh processes
    cleared it (gate/judging/fresh.py): then a note says why."""
    again = next((r.reruns for r in runs if r.reruns is not None), None)
    if result.status is not Status.PASS or again is None:
        return result
    if again.report is None or again.result.timed_out:
        return CheckResult(CheckId.RUNS, Status.FAIL, f"{result.detail}, but {again.failure()}")
    failed = {i: n for i, n in reruns.failures(again.report).items() if i not in tolerated}
    if not failed:
        return CheckResult(
            CheckId.RUNS, Status.PASS, f"{result.detail}; head's new and changed tests passed {reruns.RERUNS} reruns"
        )
    confirmed = {c.test: c for r in runs for c in r.confirmed}
    flaky = {i: n for i, n in failed.items() if i not in confirmed or confirmed[i].flaky}
    notes = "".join(f"; {fresh.note(i, n, confirmed[i])}" for i, n in failed.items() if i not in flaky)
    if not flaky:
        return CheckResult(CheckId.RUNS, Status.PASS, f"{result.detail}{notes}")
    first = next(iter(flaky))
    said = fresh.failed_in_reruns(first, flaky[first], confirmed.get(first))
    which = said if len(flaky) == 1 else f"{listing(list(flaky))} ({said})"
    return CheckResult(CheckId.RUNS, Status.FAIL, f"{result.detail}, but flaky: {which}{notes}")


def judge_old_tests(
    run: SuiteRun, sealed_changed: Sequence[str], judge_changed: Sequence[str], forbidden: Sequence[str] = ()
) -> CheckResult:
    """`forbidden`: changes an on_change = "fail" sealing rule forbids; they
    fail the check even when base's tests pass on head's code."""
    notes = []
    if sealed_changed:
        notes.append(f"sealed files changed at head: {listing(sealed_changed)}")
    if judge_changed:
        notes.append(f"head changed how it is judged (ignored, base's used): {listing(judge_changed)}")
    if forbidden:
        notes.insert(0, f"changed although sealed with on_change = fail: {listing(forbidden)}")
    tail = "; ".join(notes)
    if run.passed:
        return CheckResult(CheckId.OLD_TESTS, Status.FAIL if forbidden else Status.PASS, tail)
    if run.report is not None and run.new_failures():
        failed = run.new_failures()
        what = f"{listing(failed)} {'fails' if len(failed) == 1 else 'fail'} under base's tests"
    else:
        what = run.failure()
    return CheckResult(CheckId.OLD_TESTS, Status.FAIL, "; ".join([what, *notes]))


def second_halves(
    first_kept: CheckResult | None,
    first_skips: CheckResult | None,
    base: SuiteRun | None,
    heads: Sequence[SuiteRun],
    still_defined: Callable[[str], bool],
    family: Callable[[str], str] = str,  # str: every id a family of its own
) -> tuple[CheckResult, CheckResult]:
    """Compare base's tests run on head's code with head's own runs.

    A base test missing from every head run was removed from the suite
    (`tests_kept`); one that passed under base's tests and is skipped,
    xfailed, or dropped from the run while still defined (deselected) was
    dodged (`no_new_skips`). Missing is counted per `family` (the runner's
    `junit_ids.case_family`): a parametrized test whose cases head runs
    under new ids, as many as base's, lost none. Without reports on both
    sides there is nothing to compare, and the diff's answer stands.
    """
    head_reports = [h.report for h in heads if h.report is not None]
    if base is None or base.report is None or not head_reports:
        why = "runs not compared: no report to compare"
        return (
            first_kept or CheckResult(CheckId.TESTS_KEPT, Status.PASS, why),
            first_skips or CheckResult(CheckId.NO_NEW_SKIPS, Status.PASS, why),
        )
    broken = junit.uncollected(head_reports)
    short = junit.gone(base.report, head_reports, family)
    unrun = [g for g in short if g.family.split("::", 1)[0] in broken]  # their file failed to collect: not removed
    gone = [g for g in short if g not in unrun]
    passed_at_base = {i for i, t in base.report.tests.items() if t.outcome is junit.Outcome.PASSED}
    deselected = [d for g in gone if (d := _deselected(g, passed_at_base, still_defined)) is not None]
    return (
        first_kept or _kept(gone, unrun, broken),
        first_skips or _skips(junit.newly_skipped(base.report, head_reports), deselected),
    )


def _deselected(gone: junit.Gone, passed_at_base: set[str], still_defined: Callable[[str], bool]) -> junit.Gone | None:
    """The absent ids of a family that passed under base's tests and that
    head still defines; the family as it is when head ran some of its cases
    under new ids, since which of them were dropped is not known."""
    ids = tuple(i for i in gone.absent if i in passed_at_base and still_defined(i))
    if not ids:
        return None
    return junit.Gone(gone.family, len(ids), ids) if gone.whole else gone


def _named(groups: Sequence[junit.Gone], plain: Sequence[str] = ()) -> str:
    """Ids in one listing, with every absent id of a group that is wholly
    gone; a group whose cases head partly ran under new ids (renamed
    parameters) is its absent ids and how many fewer cases head ran, as
    which of them were dropped is not known."""
    whole = sorted({*plain, *(i for g in groups if g.whole for i in g.absent)})
    parts = [listing(whole)] if whole else []
    parts += [f"{listing(list(g.absent))} (head runs {g.count} fewer of its cases)" for g in groups if not g.whole]
    return ", ".join(parts)


def _kept(gone: list[junit.Gone], unrun: list[junit.Gone], broken: dict[str, str]) -> CheckResult:
    if not gone and not unrun:
        return CheckResult(CheckId.TESTS_KEPT, Status.PASS, "every base test ran at head")
    said = []
    if unrun:
        files = sorted({g.family.split("::", 1)[0] for g in unrun})
        count = sum(g.count for g in unrun)
        said.append(
            f"{count} base test{'s' if count > 1 else ''} did not run: {listing(files)} "
            f"could not be collected at head ({first_reason({f: broken[f] for f in files})})"
        )
    if gone:
        count = sum(g.count for g in gone)
        said.append(f"{count} base test{'s' if count > 1 else ''} missing from head's runs: {_named(gone)}")
    return CheckResult(CheckId.TESTS_KEPT, Status.FAIL, "; ".join(said))


def _skips(skipped: list[str], deselected: list[junit.Gone]) -> CheckResult:
    if not skipped and not deselected:
        return CheckResult(CheckId.NO_NEW_SKIPS, Status.PASS, "no base test newly skipped")
    return CheckResult(
        CheckId.NO_NEW_SKIPS,
        Status.FAIL,
        f"passes under base's tests, skipped or deselected at head: {_named(deselected, skipped)}",
    )


def skipped_anywhere(runs: Sequence[SuiteRun]) -> list[str]:
    """Ids skipped or xfailed in any of the runs."""
    return sorted(
        {i for r in runs if r.report is not None for i, t in r.report.tests.items() if t.outcome in junit.DODGED}
    )


def skips_against_base(runs: Sequence[SuiteRun], base_own: Mapping[str, str]) -> CheckResult | None:
    """Tests that passed in base's own suite on base's own code and are
    skipped or xfailed at head, in its runs or under base's tests."""
    dodged = [i for i in skipped_anywhere(runs) if base_own.get(i) == junit.Outcome.PASSED.value]
    if not dodged:
        return None
    return CheckResult(
        CheckId.NO_NEW_SKIPS, Status.FAIL, f"passes on base's own code, skipped at head: {listing(dodged)}"
    )


def skips_in_code(skips: Sequence[Finding]) -> CheckResult:
    """A skip raised from library code skips base's tests as well, so no
    comparison of runs sees it: the diff is the only witness."""
    more = f" (+{len(skips) - 1} more)" if len(skips) > 1 else ""
    return CheckResult(CheckId.NO_NEW_SKIPS, Status.FAIL, f"{skips[0].what} at {skips[0].path}{more}")


def passed_outside_tests(old: SuiteRun, heads: Sequence[SuiteRun], unchanged: Callable[[str], bool]) -> list[str]:
    """Base tests that fail under base's tests, pass in every head run, and
    live in a test file head did not touch: something outside the tests
    (a conftest hook, addopts, a plugin) turned them green."""
    if old.report is None or not heads or any(h.report is None for h in heads):
        return []
    failed = [t.id for t in old.report.failed()]
    green = [i for i in failed if all(_outcome(h, i) is junit.Outcome.PASSED for h in heads)]
    return [i for i in green if unchanged(i.split("::", 1)[0])]


def _outcome(run: SuiteRun, test_id: str) -> junit.Outcome | None:
    test = run.report.tests.get(test_id) if run.report is not None else None
    return test.outcome if test is not None else None


def defend_old_tests(result: CheckResult, findings: Sequence[Finding], outside: Sequence[str]) -> CheckResult:
    """Turn `old_tests` into a hard failure when the evidence says the
    verdict was bent rather than the tests changed; name what bent it."""
    reasons = [str(f) for f in findings]
    if outside:
        reasons.append(
            f"{listing(list(outside))} unchanged at head, fail under base's tests yet pass "
            "in head's runs: passed by a change outside the tests"
        )
    if not reasons:
        return result
    detail = "; ".join([*reasons, result.detail] if result.detail else reasons)
    return CheckResult(CheckId.OLD_TESTS, Status.FAIL, detail)
