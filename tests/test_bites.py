"""`bites` without a sandbox (issue 21): which mutants are tried with which
tests and time limit, what a mutant's run means, how the check reads, and
how its findings come back beside the code for a person."""

from __future__ import annotations

from gatetui.backends.base import CommandResult
from gatetui.gate.changed_code import ChangedCode
from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.code_notes import code_notes
from gatetui.gate.judge import SuiteRun
from gatetui.gate.junit import Outcome as Case
from gatetui.gate.junit import Report, TestResult
from gatetui.gate.mutant_trials import MIN_SECONDS, Outcome, Trial, choose, judge_bites, outcome, time_limit
from gatetui.stacks.mutation import Mutant
from gatetui.stacks.python.mutants import mutate

CODE = "def clamp(n):\n    if n > 10:\n        return 10\n    return n\n"
CHANGED = ChangedCode({"pkg/m.py": frozenset({2, 3, 4})}, {"pkg/m.py": CODE})
OK = CommandResult(exit_code=0, wall_seconds=3.0)


def run(name: str = "run 2", result: CommandResult = OK, **outcomes: tuple[Case, float]) -> SuiteRun:
    tests = [TestResult(k.replace("__", "::").replace("_p_", "["), o, seconds=s) for k, (o, s) in outcomes.items()]
    return SuiteRun(name, result, Report.from_results(tests))


def test_mutants_are_tried_on_reached_lines_with_the_tests_that_passed_there() -> None:
    runs = [run(**{"t.py__test_big": (Case.PASSED, 0.5), "t.py__test_small": (Case.PASSED, 0.25),
                   "t.py__test_broken": (Case.FAILED, 0.1)})]
    reached = {("pkg/m.py", 2): frozenset({"t.py::test_big", "t.py::test_small", "t.py::test_broken"}),
               ("pkg/m.py", 3): frozenset({"t.py::test_big"}), ("pkg/m.py", 4): frozenset()}
    chosen = choose(CHANGED, reached, runs, mutate, cap=3, limit=900.0)
    assert [(t.mutant.line, t.tests) for t in chosen.trials] == [
        (2, ("t.py::test_big", "t.py::test_small")), (3, ("t.py::test_big",)), (2, ("t.py::test_big", "t.py::test_small"))]
    assert chosen.untried == len([m for m in mutate("pkg/m.py", CODE, frozenset({2, 3})) if m.line in (2, 3)]) - 3
    assert {t.timeout for t in chosen.trials} == {MIN_SECONDS}


def test_no_trial_says_why() -> None:
    runs = [run(**{"t.py__test_big": (Case.FAILED, 0.5)})]
    assert choose(CHANGED, {("pkg/m.py", 2): frozenset({"t.py::test_big"})}, runs, mutate, 20, 900.0).why_none == \
        "no changed line is reached by a test that passes at head"
    passing = [run(**{"t.py__test_big": (Case.PASSED, 0.5)})]
    assert choose(CHANGED, {("pkg/m.py", 2): frozenset({"t.py::test_big"})}, passing, mutate, 0, 900.0).why_none == \
        "mutant_cap is 0"


def test_the_time_limit_grows_with_the_tests_own_time_and_the_runners_start() -> None:
    assert time_limit(["a", "b"], {"a": 4.0, "b": 2.0, "c": 100.0}, 1.0, 900.0) == 21.0
    assert time_limit(["a"], {"a": 0.01}, 0.1, 900.0) == MIN_SECONDS
    assert time_limit(["c"], {"c": 1000.0}, 0.0, 900.0) == 900.0


def test_a_mutant_is_killed_by_a_failure_or_its_time_limit_and_survives_a_pass() -> None:
    passed = run(**{"t.py__test_a": (Case.PASSED, 0.1)})
    failed = run(result=CommandResult(exit_code=1, wall_seconds=1.0), **{"t.py__test_a": (Case.FAILED, 0.1)})
    hung = SuiteRun("mutant 1", CommandResult(exit_code=None, wall_seconds=10.0, timed_out=True), None)
    crashed = SuiteRun("mutant 1", CommandResult(exit_code=None, wall_seconds=1.0, signal=11), None)
    usage = SuiteRun("mutant 1", CommandResult(exit_code=4, wall_seconds=1.0), None)
    none_ran = SuiteRun("mutant 1", CommandResult(exit_code=5, wall_seconds=1.0), Report({}))
    assert [outcome(r, (3, 4)) for r in (passed, failed, hung, crashed, usage, none_ran)] == [
        Outcome.SURVIVED, Outcome.KILLED, Outcome.KILLED, Outcome.KILLED, Outcome.UNJUDGED, Outcome.UNJUDGED]


def trial(line: int, before: str, after: str) -> Trial:
    return Trial(Mutant("pkg/m.py", line, "compare", before, after, b""), ("t.py::test_a",), 10.0)


def test_bites_reads_killed_of_tried_and_names_each_survivor() -> None:
    trials = (trial(2, "if n > 10:", "if n >= 10:"), trial(3, "return 10", "return None"), trial(4, "return n", ""))
    assert judge_bites(trials, [Outcome.KILLED] * 3, 0) == CheckResult(CheckId.BITES, Status.PASS, "3 of 3 mutants killed")
    found = judge_bites(trials, [Outcome.SURVIVED, Outcome.KILLED, Outcome.UNJUDGED], 4)
    assert found.status is Status.REVIEW
    assert found.detail.splitlines() == [
        "1 of 3 mutants killed, 1 survived: pkg/m.py:2: if n > 10:  ->  if n >= 10:, 1 could not be judged "
        "(their tests did not run); 4 not tried (mutant_cap)",
        "survived: pkg/m.py:2: if n > 10:  ->  if n >= 10:",
        "not judged: pkg/m.py:4: return n  ->  (removed)",
    ]


def test_findings_come_back_as_notes_on_heads_lines() -> None:
    bites = judge_bites((trial(2, "if n > 10:", "if n >= 10:"), trial(4, "return n", "")),
                        [Outcome.SURVIVED, Outcome.SURVIVED], 0).detail
    covered = "1 of 3 changed lines run under no test: pkg/m.py:3\npkg/m.py:3: return 10"
    assert code_notes({CheckId.BITES: bites, CheckId.COVERED: covered}) == {"pkg/m.py": {
        2: ["mutant survived: n > 10:  ->  n >= 10:"], 3: ["runs under no test"],
        4: ["mutant survived: return n  ->  (removed)"]}}
