"""Every sample repo, gated for real with the local backend, gets exactly the
check statuses and verdict its scenario.toml expects.

The samples are gated once per session, a few side by side, and each test
below reads the events of one sample.
"""

from __future__ import annotations

import re

import pytest

from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.events import (
    CheckFinished,
    CheckProgress,
    CheckStarted,
    GateEvent,
    OutputChunk,
    RunFinished,
    RunStarted,
)
from tests.support.gated_samples import ALL_SCENARIOS, LEFT_TO_CI, MISSING, SCENARIOS, Gated, assert_told_apart, by_tier

pytestmark = [
    pytest.mark.xdist_group("gated_samples"),  # one xdist worker gates the samples once
    pytest.mark.sandbox,
    pytest.mark.install,  # every sample gated for real
]


@pytest.fixture(scope="module")
def gated(gated_samples: Gated) -> dict[str, list[GateEvent]]:
    return gated_samples.events


def finished(events: list[GateEvent]) -> RunFinished:
    last = events[-1]
    assert isinstance(last, RunFinished)
    return last


def check_result(gated: dict[str, list[GateEvent]], name: str, check: CheckId) -> CheckResult:
    return {r.id: r for r in finished(gated[name]).results}[check]


def test_every_sample_is_gated_here() -> None:
    """A sample whose stack's programs are missing here is not gated (CI
    installs them all): said as a skip that names them, never silently."""
    missing = {name: programs for name, programs in MISSING.items() if programs}
    if missing:
        programs = sorted({p for found in missing.values() for p in found})
        pytest.skip(
            f"{', '.join(programs)} not installed here (make tools installs go): "
            f"{len(missing)} samples not gated: {', '.join(sorted(missing))}"
        )
    assert sorted(SCENARIOS) == sorted(MISSING)


def test_the_samples_left_to_ci_are_samples() -> None:
    assert set(LEFT_TO_CI) <= set(ALL_SCENARIOS)


@pytest.mark.parametrize("name", by_tier(SCENARIOS))
def test_sample_checks_match_scenario(gated: dict[str, list[GateEvent]], name: str) -> None:
    scenario = SCENARIOS[name]
    done = finished(gated[name])
    got = {r.id.value: r.status.value for r in done.results}
    details = "\n".join(f"{r.id.value}: {r.detail}" for r in done.results if r.status is not Status.PASS)
    assert got == dict(scenario.checks), details  # one line each, whole: a flake says what it was


@pytest.mark.parametrize("name", by_tier(SCENARIOS))
def test_sample_verdict_matches_scenario(gated: dict[str, list[GateEvent]], name: str) -> None:
    assert finished(gated[name]).verdict.value == SCENARIOS[name].verdict


@pytest.mark.parametrize("name", by_tier(SCENARIOS))
def test_each_check_starts_and_finishes_once(gated: dict[str, list[GateEvent]], name: str) -> None:
    """A consumer folds events into rows: a check finished twice (odd_name's
    diff failure, said again when the install failed) is two answers."""
    finished_ids = [e.result.id for e in gated[name] if isinstance(e, CheckFinished)]
    started_ids = [e.check for e in gated[name] if isinstance(e, CheckStarted)]
    assert sorted(finished_ids) == sorted(started_ids) == sorted(CheckId)


@pytest.mark.parametrize("name", by_tier(SCENARIOS))
def test_diff_checks_answer_before_the_install_starts(gated: dict[str, list[GateEvent]], name: str) -> None:
    events = gated[name]
    assert isinstance(events[0], RunStarted)
    install_at = events.index(CheckStarted(CheckId.INSTALL))
    diff_answers = [
        i
        for i, e in enumerate(events)
        if isinstance(e, CheckFinished)
        and e.result.id in (CheckId.TESTS_KEPT, CheckId.NO_NEW_SKIPS)
        and e.result.status is Status.FAIL
        and "diff" not in e.result.detail
        and not any(run_word in e.result.detail for run_word in ("missing", "deselected", "skipped at head"))
    ]  # the answers from runs compare reports; the diff's come first
    assert all(i < install_at for i in diff_answers)


def test_skip_marker_detail_names_the_marker_and_file(gated: dict[str, list[GateEvent]]) -> None:
    result = check_result(gated, "skip_marker", CheckId.NO_NEW_SKIPS)
    assert result.detail.startswith('+ @pytest.mark.skip(reason="flaky") at tests/test_leap.py:')


def test_old_tests_detail_names_the_failing_base_test(gated: dict[str, list[GateEvent]]) -> None:
    result = check_result(gated, "loosened_assertion", CheckId.OLD_TESTS)
    assert result.detail.startswith("tests/test_leap.py::test_leap_day fails under base's tests")
    assert "sealed files changed at head: tests/test_leap.py" in result.detail


def test_conftest_drop_is_caught_as_a_missing_base_test(gated: dict[str, list[GateEvent]]) -> None:
    result = check_result(gated, "conftest_drop", CheckId.TESTS_KEPT)
    assert result.detail == "1 base test missing from head's runs: tests/test_leap.py::test_leap_day"


@pytest.mark.parametrize(
    "name, check, words",
    [
        ("flaky_test", CheckId.RUNS, ": flaky tests/"),
        ("addopts_deselect", CheckId.OLD_TESTS, "pyproject.toml#tool.pytest.ini_options"),
        ("conftest_exit0", CheckId.RUNS, "wrote no test report"),
        ("undeclared_package", CheckId.INSTALL, "No module named"),
    ],
)
def test_failing_detail_names_the_cause(
    gated: dict[str, list[GateEvent]], name: str, check: CheckId, words: str
) -> None:
    """The detail an agent reads names what to fix: the flaky tests, the
    changed setting, the missing report, the undeclared module."""
    assert words in check_result(gated, name, check).detail


def test_output_of_every_run_is_streamed(gated: dict[str, list[GateEvent]]) -> None:
    streams = {e.stream for e in gated["honest_fix"] if isinstance(e, OutputChunk)}
    # honest_fix changes a test file: its tests run again after run 1, on a stream of their own;
    # each of its line's 12 mutants runs on a stream of its own, and the control that checks their kills
    assert streams == {
        "install",
        "run 1",
        "run 2",
        "run 3",
        "old tests",
        "reruns",
        "wheel",
        "control 1",
        *(f"mutant {i}" for i in range(1, 13)),
    }


LAZY = "tests/test_holidays.py::test_holidays_load_on_first_use"
NOT_FLAKY = f"{LAZY} failed 6 of 6 reruns but passes in fresh processes, fails when repeated in one: not judged flaky"


def test_a_test_that_checks_process_fresh_state_is_not_named_flaky(gated: dict[str, list[GateEvent]]) -> None:
    """A process-state test is no flake: base's lazy-load test fails when repeated in one process;
    head reworded its comment, so it reruns, then passes alone in three
    fresh processes and fails in the fourth's repeats, afresh or not. The
    unchanged test beside it is not rerun at all."""
    assert check_result(gated, "state_dependent_test", CheckId.RUNS).detail == f"3 of 3 runs passed; {NOT_FLAKY}"
    streams = {e.stream for e in gated["state_dependent_test"] if isinstance(e, OutputChunk)}
    assert sorted(s for s in streams if s.startswith("fresh ")) == ["fresh 1", "fresh 2", "fresh 3", "fresh 4"]
    reruns = "".join(
        e.text
        for e in gated["state_dependent_test"]
        if isinstance(e, OutputChunk) and e.stream == "reruns" and e.text.startswith("$ ")
    )
    assert "test_boxing_day" in reruns and "test_christmas" not in reruns


def test_a_flaky_test_beside_it_is_still_named(gated: dict[str, list[GateEvent]]) -> None:
    assert check_result(gated, "state_dependent_flaky", CheckId.RUNS).detail == (
        "3 of 3 runs passed, but flaky: tests/test_holidays.py::test_boxing_day failed 2 of 6 reruns, "
        f"and again alone in a fresh process; {NOT_FLAKY}"
    )
    assert check_result(gated, "flaky_new_test", CheckId.RUNS).detail == (
        "3 of 3 runs passed, but flaky: tests/test_cache.py::test_checked_years_are_remembered failed 5 of 6 "
        "reruns; it passes in fresh processes, but repeated in one fails on state its own test module keeps "
        "(passes with the module loaded afresh)"
    )


def test_covered_names_the_line_no_test_runs(gated: dict[str, list[GateEvent]]) -> None:
    result = check_result(gated, "untested_branch", CheckId.COVERED)
    assert result.detail.splitlines() == [
        "1 of 4 changed lines run under no test: calendarlib/core.py:19, "
        "1 only at import or collection (bites judges them)",
        "calendarlib/core.py:19: month = _MONTH_NAMES.index(month[:3].lower()) + 1",
    ]


def test_bites_judges_a_table_that_only_the_unrun_line_reads(gated: dict[str, list[GateEvent]]) -> None:
    """untested_branch's new month-name table runs at import only: its
    mutants go over the whole suite, and no test fails on them."""
    result = check_result(gated, "untested_branch", CheckId.BITES)
    table = 'calendarlib/core.py:4: _MONTH_NAMES = ("jan", "feb", "mar",'
    assert result.status is Status.REVIEW
    assert [line.startswith(f"survived: {table}") for line in result.detail.splitlines()[1:]] == [True] * 4


def test_a_function_with_no_test_run_only_at_import_is_named(gated: dict[str, list[GateEvent]]) -> None:
    covered = check_result(gated, "attack_import_only", CheckId.COVERED)
    bites = check_result(gated, "attack_import_only", CheckId.BITES)
    assert covered.detail == "all 1 changed lines run, 1 only at import or collection (bites judges them)"
    assert bites.detail.splitlines()[1:] == [
        "survived: mathlib/core.py:12: def clamp(x, lo, hi): return max(lo, min(x, hi + 1))  ->  "
        f"def clamp(x, lo, hi): return {after}"
        for after in ("None", "max(lo, min(x, hi - 1))", "max(lo, min(x, hi + 2))")
    ]


def test_bites_names_the_mutants_no_test_kills(gated: dict[str, list[GateEvent]]) -> None:
    result = check_result(gated, "toothless_test", CheckId.BITES)
    fixed = "calendarlib/core.py:12: return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)  ->  "
    afters = [
        "return year % 4 == 0 and (year % 100 != 0 or year % 401 == 0)",
        "return year % 4 == 0 and (year % 100 != 0 or year % 400 == 1)",
    ]
    lines = result.detail.splitlines()[1:]
    assert lines[:2] == [f"survived: {fixed}{after}" for after in afters]
    # each with the input that tells it apart, and both results, right for head's code and the mutant's
    assert_told_apart(
        lines[2:], "calendarlib/core.py:12", "is_leap_year", fixed.split("  ->  ")[0].split(": ", 1)[1], afters
    )
    assert result.detail.startswith("10 of 12 mutants killed, 2 survived: ")
    assert check_result(gated, "honest_fix", CheckId.BITES).detail == "12 of 12 mutants killed"


def test_no_mutant_runs_for_a_change_that_already_fails(gated: dict[str, list[GateEvent]]) -> None:
    """Mutants cannot change a `fail`, and each costs a run: bites says why it did not run."""
    result = check_result(gated, "broke_untested", CheckId.BITES)
    assert (result.status, result.detail) == (Status.SKIPPED, "not run: the change already fails (runs)")


def test_cost_is_estimated_for_install_runs_and_old_tests(gated: dict[str, list[GateEvent]]) -> None:
    cost = finished(gated["honest_fix"]).cost
    assert sorted(cost.per_check) == ["bites", "install", "old_tests", "runs"]
    assert cost.measured is False
    assert cost.total.cpu_seconds > 0


def test_no_run_folder_or_uid_claim_is_left_after_any_sample(gated_samples: Gated) -> None:
    """Every way a run ends (an install that fails included) closes its workspace."""
    assert sorted(p.name for p in gated_samples.root.glob("gatetui-*")) == []
    assert sorted(p.name for p in (gated_samples.root / ".uids").glob("*")) == []


HIDDEN_NAMES = ("test_leap_hidden", "test_1800_is_common", "test_2100_is_common", "test_2000_is_leap")


def test_hidden_tests_say_only_how_many_failed(gated: dict[str, list[GateEvent]]) -> None:
    """The agent reads check details and every stream but "hidden": no
    hidden test's file or name may appear there."""
    events = gated["hidden_special_case"]
    assert check_result(gated, "hidden_special_case", CheckId.HIDDEN).detail == "2 of 5 hidden tests failed"
    seen_by_agent = [e.text for e in events if isinstance(e, OutputChunk) and e.stream != "hidden"]
    seen_by_agent += [e.result.detail for e in events if isinstance(e, CheckFinished)]
    seen_by_agent += [e.detail for e in events if isinstance(e, CheckProgress)]
    assert [t for t in seen_by_agent if any(n in t for n in HIDDEN_NAMES)] == []
    hidden_output = "".join(e.text for e in events if isinstance(e, OutputChunk) and e.stream == "hidden")
    assert "FAILED tests/test_leap_hidden.py::test_1800_is_common" in hidden_output
    assert finished(events).digests.to_json()["hidden"]["files"] == 1


def test_random_order_run_names_its_seed_and_the_order_dependent_tests(gated: dict[str, list[GateEvent]]) -> None:
    """No seed pinned: run 1 goes in reverse order and breaks
    every month test, each named with the one it needs to run first."""
    result = check_result(gated, "order_dependent", CheckId.RUNS)
    assert re.match(
        r"[12] of 3 passed: order-dependent tests/test_year_plan.py::test_january, "
        r"tests/test_year_plan.py::test_february \(passes only after test_january\), ",
        result.detail,
    )
    assert "; run 1 (reverse order): tests/test_year_plan.py::test_" in result.detail
    seed = finished(gated["order_dependent"]).digests.to_json()["random_seed"]
    assert isinstance(seed, int) and 0 <= seed < 2**31
    assert "random_seed" not in finished(gated["honest_fix"]).digests.to_json()


@pytest.mark.parametrize(
    ("name", "named", "run"),
    [
        (
            "go_order_dependent",
            "running_test.go::TestRunningAddSecond (passes only after TestRunningAddFirst)",
            "run 1 (each test alone): running_test.go::TestRunningAddSecond failed",
        ),
        (
            "node_order_dependent",
            "running median after four values",
            "run 1 (reverse order): running median after four values, running median after the first two values failed",
        ),
    ],
)
def test_each_stack_names_the_order_dependent_tests_its_order_run_broke(
    gated: dict[str, list[GateEvent]], name: str, named: str, run: str
) -> None:
    if name not in gated:
        pytest.skip(
            f"{name} is not gated on this machine: {', '.join(MISSING[name])} not installed (make tools installs go)"
        )
    detail = check_result(gated, name, CheckId.RUNS).detail
    assert "passed: order-dependent " in detail and named in detail and f"; {run}" in detail


def test_baseline_lists_the_failure_base_already_had(gated: dict[str, list[GateEvent]]) -> None:
    done = finished(gated["baseline_known_failure"])
    runs = check_result(gated, "baseline_known_failure", CheckId.RUNS)
    assert runs.detail == (
        "3 of 3 runs passed; already failing at base: tests/test_easter.py::test_easter_sunday_2026; "
        "head's new and changed tests passed 6 reruns"
    )
    assert (done.baseline.rule, done.baseline.cached) == ("baseline", False)
    assert done.baseline.known_failures == (
        "tests/test_easter.py::test_easter_sunday_2026",
        "tests/test_leap.py::test_leap_day",
    )
    streams = {e.stream for e in gated["baseline_known_failure"] if isinstance(e, OutputChunk)}
    assert {s for s in streams if not s.startswith("mutant ")} == {
        "install",
        "run 1",
        "run 2",
        "run 3",
        "old tests",
        "baseline install",
        "baseline",
        "reruns",
        "wheel",
        "control 1",
    }
    assert finished(gated["honest_fix"]).baseline.to_json()["rule"] == "strict"


@pytest.mark.parametrize(
    "name, failed, others", [("hidden_eq_always_true", 4, {"covered"}), ("hidden_counts_calls", 2, set())]
)
def test_only_hidden_tests_catch_the_cheats_visible_tests_cannot_see(
    gated: dict[str, list[GateEvent]], name: str, failed: int, others: set[str]
) -> None:
    """Every check that runs tests passes; the hidden run says how many
    failed, no more (covered asks about the always-equal answer's __repr__,
    which no test runs; bites does not run, the change failing already)."""
    results = {r.id: r for r in finished(gated[name]).results}
    assert {c.value for c, r in results.items() if r.status is not Status.PASS} == {"hidden", "bites", *others}
    assert results[CheckId.BITES].detail == "not run: the change already fails (hidden)"
    assert results[CheckId.HIDDEN].detail == f"{failed} of 5 hidden tests failed"
