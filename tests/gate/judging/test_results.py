"""Judging the runs: verdict folding, runs and old_tests details, and the
second halves that compare base's tests with head's runs."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatetui.backends.base import CommandResult
from gatetui.gate.checks import CheckId, CheckResult, Status, Verdict, decide
from gatetui.gate.judging.results import (
    SuiteRun,
    judge_old_tests,
    judge_runs,
    second_halves,
    skipped_anywhere,
    skips_against_base,
)
from gatetui.gate.reports.junit import Outcome, Report, TestResult
from gatetui.gate.reports.test_ids import case_family

OK = CommandResult(exit_code=0, wall_seconds=1.0)
FAILED = CommandResult(exit_code=1, wall_seconds=1.0)


def report(**outcomes: Outcome) -> Report:
    return Report.from_results(TestResult(f"t.py::{k}", v) for k, v in outcomes.items())


def run(name: str, rep: Report | None, result: CommandResult = OK) -> SuiteRun:
    return SuiteRun(name, result, rep, "" if rep else "no report written")


P, F, S = Outcome.PASSED, Outcome.FAILED, Outcome.SKIPPED


def test_verdict_rules() -> None:
    def results(**statuses: Status) -> list[CheckResult]:
        return [CheckResult(CheckId(k), v) for k, v in statuses.items()]

    assert decide(results(runs=Status.PASS, old_tests=Status.FAIL)) is Verdict.REVIEW
    assert decide(results(runs=Status.PASS, old_tests=Status.FAIL), old_tests_fail_is_fatal=True) is Verdict.FAIL
    assert decide(results(runs=Status.FAIL, old_tests=Status.FAIL)) is Verdict.FAIL
    assert decide(results(install=Status.ERROR, old_tests=Status.FAIL)) is Verdict.ERROR
    assert decide(results(install=Status.PASS, hidden=Status.SKIPPED)) is Verdict.PASS


def test_runs_names_flaky_tests_and_the_first_failure() -> None:
    runs = [run("run 1", report(a=P, b=P)), run("run 2", report(a=F, b=P), FAILED), run("run 3", report(a=P, b=P))]
    assert judge_runs(runs) == CheckResult(
        CheckId.RUNS, Status.FAIL, "2 of 3 passed: flaky t.py::a; run 2: t.py::a failed"
    )


def test_run_without_report_fails_even_with_exit_zero() -> None:
    runs = [run(f"run {i}", None) for i in (1, 2, 3)]
    assert judge_runs(runs).detail == "0 of 3 passed; run 1 wrote no test report (no report written; exit code 0)"


def test_run_where_everything_skipped_does_not_pass() -> None:
    assert (
        judge_runs([run("run 1", report(a=S))]).detail == "0 of 1 passed; run 1 ran no test that passed (1 collected)"
    )


def test_a_report_that_does_not_hold_together_fails_the_run_and_names_its_first_finding() -> None:
    """Findings fail a run whose exit and tests are green, and one whose
    only failures base already had: the shape of the report was forged."""
    forged = Report(
        report(a=P).tests, ("t.py::a reported twice: fail, then pass", "t.py::z started and never reported an outcome")
    )
    assert (
        judge_runs([run("run 1", forged)]).detail
        == "0 of 1 passed; run 1: t.py::a reported twice: fail, then pass (and 1 more finding)"
    )
    tolerated = SuiteRun(
        "run 1",
        FAILED,
        Report(report(a=F, b=P).tests, ("t.py::a reported twice: fail, then pass",)),
        tolerated=frozenset({"t.py::a"}),
    )
    assert not tolerated.passed and not forged.passed_all
    assert replace(tolerated, report=report(a=F, b=P)).passed  # the same run without the finding


def test_old_tests_names_failing_test_and_judge_changes() -> None:
    result = judge_old_tests(run("old tests", report(a=F), FAILED), ["tests/t.py"], ["package.json#scripts.test"])
    assert result.detail == (
        "t.py::a fails under base's tests; sealed files changed at head: tests/t.py; "
        "head changed how it is judged (ignored, base's used): package.json#scripts.test"
    )


def test_second_halves_missing_and_deselected() -> None:
    base = run("old tests", report(gone=P, dropped=P, skipped=P, failing=F))
    heads = [run("run 1", report(skipped=S, failing=F))]
    kept, skips = second_halves(None, None, base, heads, lambda test_id: test_id.endswith("dropped"))
    assert (kept.status, skips.status) == (Status.FAIL, Status.FAIL)
    assert kept.detail == "2 base tests missing from head's runs: t.py::dropped, t.py::gone"
    assert skips.detail == "passes under base's tests, skipped or deselected at head: t.py::dropped, t.py::skipped"


def test_a_file_that_failed_to_collect_is_named_not_counted_as_removed_or_deselected() -> None:
    """A head change that breaks a base test file's import: its tests did
    not run, which is neither a deletion nor a deselection."""
    broken = TestResult("t.py", Outcome.ERROR, "collection failure: ImportError: cannot import name 'mul'")
    base = run("old tests", report(a=P, b=P))
    head = run("run 1", Report.from_results([broken, TestResult("u.py::c", P)]), FAILED)
    kept, skips = second_halves(None, None, base, [head], lambda _: True)
    assert (kept.status, kept.detail) == (
        Status.FAIL,
        "2 base tests did not run: t.py could not be collected at head (ImportError: cannot import name 'mul')",
    )
    assert (skips.status, skips.detail) == (Status.PASS, "no base test newly skipped")
    assert head.failure() == "run 1: t.py could not be collected (ImportError: cannot import name 'mul')"


@pytest.mark.parametrize("outcome", [Outcome.SKIPPED, Outcome.XFAILED])
def test_a_test_passing_on_base_own_code_and_dodged_at_head_fails_no_new_skips(outcome: Outcome) -> None:
    """Skipped (or xfailed) from library code at run time: base's tests on
    head's code dodge it too, only base's own run shows it passed."""
    old = run("old tests", report(leap=outcome, common=P, platform=S))
    heads = [run("run 1", report(leap=outcome, common=P, platform=S))]
    assert skipped_anywhere([old]) == ["t.py::leap", "t.py::platform"]
    found = skips_against_base(
        [*heads, old], {"t.py::leap": "passed", "t.py::common": "passed", "t.py::platform": "skipped"}
    )
    assert found == CheckResult(
        CheckId.NO_NEW_SKIPS, Status.FAIL, "passes on base's own code, skipped at head: t.py::leap"
    )


def test_skips_base_had_itself_are_no_finding() -> None:
    old = run("old tests", report(platform=S, common=P))
    assert skips_against_base([old], {"t.py::platform": "skipped", "t.py::common": "passed"}) is None


def test_diff_answer_stands_when_there_is_nothing_to_compare() -> None:
    first = CheckResult(CheckId.TESTS_KEPT, Status.FAIL, "1 removed, 0 added: t.py::a")
    kept, skips = second_halves(first, None, run("old tests", None), [run("run 1", None)], lambda _: True)
    assert kept is first
    assert (skips.status, skips.detail) == (Status.PASS, "runs not compared: no report to compare")


outcome = st.sampled_from([P, F, S, Outcome.XFAILED, Outcome.ERROR])


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from("abcdef"), outcome, min_size=1))
def test_identical_runs_leave_nothing_missing_or_dodged(outcomes: dict[str, Outcome]) -> None:
    """Head running exactly base's tests with base's outcomes passes both halves."""
    same = report(**outcomes)
    kept, skips = second_halves(None, None, run("old", same), [run("r1", same), run("r2", same)], lambda _: True)
    assert (kept.status, skips.status) == (Status.PASS, Status.PASS)


def test_a_listing_groups_a_parametrized_tests_ids() -> None:
    from gatetui.gate.judging.results import listing

    ids = [f"tests/t.py::test_tz[zone{i}]" for i in range(40)] + ["tests/t.py::test_a", "tests/u.py::test_b[x]"]
    assert listing(ids) == (
        "tests/t.py::test_tz[zone0, zone1, zone2 and 37 more], tests/t.py::test_a, tests/u.py::test_b[x]"
    )
    assert listing([f"t.py::test_{i}" for i in range(7)]) == (
        "t.py::test_0, t.py::test_1, t.py::test_2, t.py::test_3, t.py::test_4 and 2 more"
    )
    assert listing(["t.py::x", "t.py::x[1]"]) == "t.py::x, t.py::x[1]"


@settings(max_examples=200)
@given(st.lists(st.text(alphabet="ab[]:/.", min_size=1, max_size=12), max_size=30, unique=True))
def test_a_listing_counts_every_id_once(ids: list[str]) -> None:
    """Every id is shown in its group or counted in `and N more`, once."""
    from gatetui.gate.judging.results import LIST_MAX, _param_groups, listing

    groups = _param_groups(ids)
    assert sum(max(1, len(params)) for _, params in groups) == len(ids)
    hidden = sum(max(1, len(params)) for _, params in groups[LIST_MAX:])
    assert listing(ids).endswith(f" and {hidden} more") == (hidden > 0)


def test_a_pass_from_the_diff_alone_says_so_on_its_line() -> None:
    """After a failed install the two diff checks pass on the diff only: the
    verdict block says so, where a plain `pass` read as a judged pass."""
    from gatetui.gate.checks import DIFF_ONLY

    partial = CheckResult(CheckId.TESTS_KEPT, Status.PASS, f"{DIFF_ONLY}: install failed")
    judged = CheckResult(CheckId.TESTS_KEPT, Status.PASS, "fresh copy")
    assert partial.line() == "pass no tests removed: diff only: install failed"
    assert judged.line() == "pass no tests removed"


def cases(**outcomes: Outcome) -> Report:
    """A report of pytest ids, `name__params` written `t.py::name[params]`."""

    def node_id(key: str) -> str:
        name, _, params = key.partition("__")
        return f"t.py::{name}[{params}]" if params else f"t.py::{name}"

    return Report.from_results(TestResult(node_id(k), v) for k, v in outcomes.items())


PYTEST = case_family("pytest")


def test_parametrized_cases_renamed_with_their_values_are_neither_missing_nor_deselected() -> None:
    """humanize 4.9 -> 4.10: the frozen date moved from 2020 to 2010 and a
    case was inserted, so every case of test_naturaldate has a new id at
    head (value and index), and none was removed."""
    base = run("old tests", cases(naturaldate__input0_Mar_02_2019=P, naturaldate__input1_Apr_02_2019=P, plain=P))
    head = run(
        "run 1",
        cases(
            naturaldate__input0_Mar_02_2009=P,
            naturaldate__input1_Jan_01_2010=P,
            naturaldate__input2_Apr_02_2009=P,
            plain=P,
        ),
    )
    kept, skips = second_halves(None, None, base, [head], lambda _: True, PYTEST)
    assert (kept.status, kept.detail) == (Status.PASS, "every base test ran at head")
    assert (skips.status, skips.detail) == (Status.PASS, "no base test newly skipped")


def test_a_case_deleted_from_a_parametrize_list_is_still_missing() -> None:
    """The cheat: the one failing case taken out of the list. Head runs one
    case fewer, so the count still catches it, named by its id; base's
    tests run it on head's code and it fails there too (old_tests)."""
    base = run("old tests", cases(leap__2000=P, leap__1900=F, leap__2024=P), FAILED)
    head = run("run 1", cases(leap__2000=P, leap__2024=P))
    kept, skips = second_halves(None, None, base, [head], lambda _: True, PYTEST)
    assert (kept.status, kept.detail) == (Status.FAIL, "1 base test missing from head's runs: t.py::leap[1900]")
    assert (skips.status, skips.detail) == (Status.PASS, "no base test newly skipped")  # it failed under base's tests
    old = judge_old_tests(base, ["t.py"], [])
    assert (old.status, old.detail) == (
        Status.FAIL,
        "t.py::leap[1900] fails under base's tests; sealed files changed at head: t.py",
    )


def test_a_family_short_of_cases_under_new_ids_names_base_absent_ids_and_the_count() -> None:
    """Three cases renamed and one of them dropped: which one is not known,
    so the detail names base's absent ids and says how many head lacks;
    the passing ones still defined are deselected as a family."""
    base = run("old tests", cases(x__a1=P, x__b2=P, x__c3=P, gone=P))
    head = run("run 1", cases(x__a10=P, x__b20=P))
    kept, skips = second_halves(None, None, base, [head], lambda test_id: "::x[" in test_id, PYTEST)
    assert (kept.status, kept.detail) == (
        Status.FAIL,
        "2 base tests missing from head's runs: t.py::gone, t.py::x[a1, b2, c3] (head runs 1 fewer of its cases)",
    )
    assert (skips.status, skips.detail) == (
        Status.FAIL,
        "passes under base's tests, skipped or deselected at head: "
        "t.py::x[a1, b2, c3] (head runs 1 fewer of its cases)",
    )


def test_a_case_deleted_but_still_defined_is_deselected_by_its_id() -> None:
    base = run("old tests", cases(x__1=P, x__2=P, x__3=P))
    head = run("run 1", cases(x__1=P, x__3=P))
    kept, skips = second_halves(None, None, base, [head], lambda _: True, PYTEST)
    assert kept.detail == "1 base test missing from head's runs: t.py::x[2]"
    assert skips.detail == "passes under base's tests, skipped or deselected at head: t.py::x[2]"


def test_without_a_family_rule_every_id_stands_alone() -> None:
    """A runner whose ids name no cases (vitest: a title may end in `[x]`)
    is compared id by id, as before."""
    base = run("old tests", cases(x__1=P))
    head = run("run 1", cases(x__2=P))
    kept, _ = second_halves(None, None, base, [head], lambda _: True, case_family("vitest"))
    assert kept.detail == "1 base test missing from head's runs: t.py::x[1]"


@pytest.mark.parametrize(
    ("test_id", "family"),
    [
        ("t.py::test_x[1-2]", "t.py::test_x"),
        ("t.py::C::test_x[a::b[0]]", "t.py::C::test_x"),
        ("t/x.py::test_y", "t/x.py::test_y"),
        ("t.py", "t.py"),
        ("t.py::test_x[open", "t.py::test_x[open"),
        ("[weird]", "[weird]"),
        ("t.py::[odd]", "t.py::[odd]"),
    ],
)
def test_pytest_family_is_the_test_a_case_belongs_to(test_id: str, family: str) -> None:
    assert case_family("pytest")(test_id) == family
    assert case_family("junit")(test_id) == test_id


@settings(max_examples=150, deadline=None)
@given(
    base_params=st.lists(st.text(alphabet="ab01-", min_size=1, max_size=3), min_size=1, max_size=6, unique=True),
    head_params=st.lists(st.text(alphabet="ab01-", min_size=1, max_size=3), max_size=6, unique=True),
)
def test_a_family_is_short_by_exactly_the_cases_head_lacks(base_params: list[str], head_params: list[str]) -> None:
    """Whatever the parameter ids, tests_kept fails exactly when head runs
    fewer cases of the function than base, and counts the difference."""

    def ids(params: list[str]) -> Report:
        return Report.from_results(
            [TestResult("t.py::other", P), *(TestResult(f"t.py::test_x[{p}]", P) for p in params)]
        )

    kept, _ = second_halves(
        None, None, run("old", ids(base_params)), [run("r1", ids(head_params))], lambda _: True, PYTEST
    )
    short = len(base_params) - len(head_params)
    assert (kept.status is Status.FAIL) == (short > 0)
    if short > 0:
        assert kept.detail.startswith(f"{short} base test{'s' if short > 1 else ''} missing from head's runs: ")
