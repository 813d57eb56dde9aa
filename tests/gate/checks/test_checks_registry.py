"""The checks as declarations: the eight checks keep their ids, titles and
order, and the verdict folded from the declarations is the verdict the gate
gave when `decide` named its checks."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from gatetui.gate.checks import (
    CHECK_ORDER,
    SPECS,
    TITLES,
    CheckId,
    CheckResult,
    Counts,
    Need,
    Phase,
    Status,
    Verdict,
    announced_at,
    decide,
    spec_of,
)
from gatetui.gate.phases import announced


def decide_by_name(results: list[CheckResult], old_tests_fail_is_fatal: bool = False) -> Verdict:
    """`decide` as it was before the declarations: a copy, kept to compare."""
    failed = {r.id for r in results if r.status is Status.FAIL}
    to_review = {CheckId.OLD_TESTS, CheckId.COVERED, CheckId.BITES}
    if failed - to_review:
        return Verdict.FAIL
    if failed and old_tests_fail_is_fatal:
        return Verdict.FAIL
    if any(r.status is Status.ERROR for r in results):
        return Verdict.ERROR
    if failed or any(r.status is Status.REVIEW for r in results):
        return Verdict.REVIEW
    return Verdict.PASS


def test_eight_checks_with_their_ids_titles_and_order() -> None:
    assert [(s.id.value, s.title) for s in SPECS] == [
        ("install", "installs from scratch"),
        ("runs", "suite passes 3 of 3 runs"),
        ("tests_kept", "no tests removed"),
        ("no_new_skips", "nothing new skipped or focused"),
        ("old_tests", "old tests pass on new code"),
        ("hidden", "hidden tests pass"),
        ("covered", "changed code runs under the tests"),
        ("bites", "the tests catch bugs in the changed code"),
    ]
    assert tuple(CheckId) == CHECK_ORDER
    assert dict(TITLES) == {c: c.title for c in CheckId}
    assert (
        CheckResult(CheckId.OLD_TESTS, Status.FAIL, "t.py::a fails").line()
        == "FAIL old tests pass on new code: t.py::a fails"
    )


def test_what_each_check_declares() -> None:
    assert {s.id: s.announced for s in SPECS} == {
        CheckId.INSTALL: Phase.INSTALL,
        CheckId.RUNS: Phase.SUITE,
        CheckId.TESTS_KEPT: Phase.PLAN,
        CheckId.NO_NEW_SKIPS: Phase.PLAN,
        CheckId.OLD_TESTS: Phase.SUITE,
        CheckId.HIDDEN: Phase.PLAN,
        CheckId.COVERED: Phase.PLAN,
        CheckId.BITES: Phase.PLAN,
    }
    assert [s.id for s in announced_at(Phase.PLAN)] == [
        CheckId.TESTS_KEPT,
        CheckId.NO_NEW_SKIPS,
        CheckId.HIDDEN,
        CheckId.COVERED,
        CheckId.BITES,
    ]
    assert [s.id for s in SPECS if s.reads_diff] == [CheckId.TESTS_KEPT, CheckId.NO_NEW_SKIPS]
    assert [s.id for s in SPECS if s.failure is Counts.REVIEW] == [CheckId.OLD_TESTS, CheckId.COVERED, CheckId.BITES]
    assert [s.id for s in SPECS if Need.MUTANT_RUNS in s.needs] == [CheckId.BITES]
    assert [s.id for s in SPECS if Need.INSTALL not in s.needs] == [CheckId.INSTALL]
    assert [s.id for s in SPECS if Need.HIDDEN_TESTS in s.needs] == [CheckId.HIDDEN]
    assert [s.id for s in SPECS if Need.OLD_TESTS_RUN in s.needs] == [
        CheckId.TESTS_KEPT,
        CheckId.NO_NEW_SKIPS,
        CheckId.OLD_TESTS,
    ]
    assert [s.id for s in SPECS if Need.BASE_OWN in s.needs] == [CheckId.RUNS, CheckId.NO_NEW_SKIPS]


def test_every_check_announced_with_the_plan_can_answer_there() -> None:
    assert list(announced.ANSWERS) == [s.id for s in announced_at(Phase.PLAN)]


def test_how_one_result_weighs() -> None:
    old_tests, runs = spec_of(CheckId.OLD_TESTS), spec_of(CheckId.RUNS)
    assert old_tests.weigh(Status.FAIL) is Verdict.REVIEW
    assert old_tests.weigh(Status.FAIL, policy_fails=True) is Verdict.FAIL
    assert runs.weigh(Status.FAIL) is Verdict.FAIL
    assert runs.weigh(Status.ERROR) is Verdict.ERROR
    assert runs.weigh(Status.REVIEW) is Verdict.REVIEW
    assert [runs.weigh(s) for s in (Status.PASS, Status.SKIPPED, Status.WAITING, Status.RUNNING)] == [Verdict.PASS] * 4


def test_the_verdict_rules_still_hold() -> None:
    def results(**statuses: Status) -> list[CheckResult]:
        return [CheckResult(CheckId(k), v) for k, v in statuses.items()]

    assert decide([]) is Verdict.PASS
    assert decide(results(old_tests=Status.FAIL, hidden=Status.ERROR)) is Verdict.ERROR
    assert decide(results(old_tests=Status.FAIL, hidden=Status.ERROR), old_tests_fail_is_fatal=True) is Verdict.FAIL
    assert decide(results(install=Status.REVIEW, runs=Status.PASS)) is Verdict.REVIEW
    assert decide(results(tests_kept=Status.FAIL, install=Status.ERROR)) is Verdict.FAIL


every_result = st.builds(CheckResult, st.sampled_from(list(CheckId)), st.sampled_from(list(Status)))


@given(st.lists(every_result, max_size=8), st.booleans())
def test_the_declarations_decide_as_the_names_did(results: list[CheckResult], fatal: bool) -> None:
    assert decide(results, fatal) is decide_by_name(results, fatal)


def test_every_combination_of_the_first_six_decides_as_the_names_did() -> None:
    """Each of the first six checks in each final status, with either policy:
    5**6 * 2 verdicts (waiting and running weigh as nothing, as before; the
    eight together, hypothesis tries: 5**8 * 2 is 20 s of this test)."""
    final = [s for s in Status if s.final]
    for statuses in itertools.product(final, repeat=6):
        row = [CheckResult(check, status) for check, status in zip(CHECK_ORDER, statuses)]
        for fatal in (False, True):
            assert decide(row, fatal) is decide_by_name(row, fatal), (row, fatal)
