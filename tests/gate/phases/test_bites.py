"""`bites` without a sandbox: which mutants are tried with which
tests and time limit, what a mutant's run means, how the check reads, and
how its findings come back beside the code for a person."""

from __future__ import annotations

from gatetui.backends.base import CommandResult
from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.diff.changed_code import ChangedCode
from gatetui.gate.judging.code_notes import code_notes
from gatetui.gate.judging.mutants import (
    FEW,
    MIN_SECONDS,
    THOROUGH,
    Outcome,
    Trial,
    choose,
    judge_bites,
    outcome,
    time_limit,
)
from gatetui.gate.judging.results import SuiteRun
from gatetui.gate.reports.junit import Outcome as Case
from gatetui.gate.reports.junit import Report, TestResult
from gatetui.stacks.mutant_search import Found
from gatetui.stacks.mutation import Mutant
from gatetui.stacks.python.mutants import mutate

CODE = "def clamp(n):\n    if n > 10:\n        return 10\n    return n\n"
CHANGED = ChangedCode({"pkg/m.py": frozenset({2, 3, 4})}, {"pkg/m.py": CODE})
OK = CommandResult(exit_code=0, wall_seconds=3.0)


def run(name: str = "run 2", result: CommandResult = OK, **outcomes: tuple[Case, float]) -> SuiteRun:
    tests = [TestResult(k.replace("__", "::").replace("_p_", "["), o, seconds=s) for k, (o, s) in outcomes.items()]
    return SuiteRun(name, result, Report.from_results(tests))


def test_mutants_are_tried_on_reached_lines_with_the_tests_that_passed_there() -> None:
    runs = [
        run(
            **{
                "t.py__test_big": (Case.PASSED, 0.5),
                "t.py__test_small": (Case.PASSED, 0.25),
                "t.py__test_broken": (Case.FAILED, 0.1),
            }
        )
    ]
    reached = {
        ("pkg/m.py", 2): frozenset({"t.py::test_big", "t.py::test_small", "t.py::test_broken"}),
        ("pkg/m.py", 3): frozenset({"t.py::test_big"}),
        ("pkg/m.py", 4): frozenset(),
    }
    chosen = choose(CHANGED, reached, runs, mutate, cap=4, limit=900.0)
    assert [(t.mutant.line, t.tests) for t in chosen.trials] == [  # line 4 ran only at import: the whole suite
        (2, ("t.py::test_big", "t.py::test_small")),
        (3, ("t.py::test_big",)),
        (4, ()),
        (2, ("t.py::test_big", "t.py::test_small")),
    ]
    assert chosen.untried == len(mutate("pkg/m.py", CODE, frozenset({2, 3, 4}))) - 4
    assert {t.timeout for t in chosen.trials} == {MIN_SECONDS}


def test_no_trial_says_why() -> None:
    runs = [run(**{"t.py__test_big": (Case.FAILED, 0.5)})]
    assert (
        choose(CHANGED, {("pkg/m.py", 2): frozenset({"t.py::test_big"})}, runs, mutate, 20, 900.0).why_none
        == "no changed line is reached by a test that passes at head"
    )
    passing = [run(**{"t.py__test_big": (Case.PASSED, 0.5)})]
    assert (
        choose(CHANGED, {("pkg/m.py", 2): frozenset({"t.py::test_big"})}, passing, mutate, 0, 900.0).why_none
        == "mutant_cap is 0"
    )


def test_the_time_limit_grows_with_the_tests_own_time_and_the_runners_start() -> None:
    assert time_limit(["a", "b"], {"a": 4.0, "b": 2.0, "c": 100.0}, 1.0, 900.0) == 21.0
    assert time_limit(["a"], {"a": 0.01}, 0.1, 900.0) == MIN_SECONDS
    assert time_limit(["c"], {"c": 1000.0}, 0.0, 900.0) == 900.0


def test_a_mutant_is_killed_by_a_failure_timed_out_by_its_limit_and_survives_a_pass() -> None:
    passed = run(**{"t.py__test_a": (Case.PASSED, 0.1)})
    failed = run(result=CommandResult(exit_code=1, wall_seconds=1.0), **{"t.py__test_a": (Case.FAILED, 0.1)})
    hung = SuiteRun("mutant 1", CommandResult(exit_code=None, wall_seconds=10.0, timed_out=True), None)
    crashed = SuiteRun("mutant 1", CommandResult(exit_code=None, wall_seconds=1.0, signal=11), None)
    usage = SuiteRun("mutant 1", CommandResult(exit_code=4, wall_seconds=1.0), None)
    none_ran = SuiteRun("mutant 1", CommandResult(exit_code=5, wall_seconds=1.0), Report({}))
    failed_then_hung = SuiteRun(
        "mutant 1", CommandResult(exit_code=None, wall_seconds=10.0, timed_out=True), failed.report
    )
    assert [outcome(r, (3, 4)) for r in (passed, failed, hung, crashed, usage, none_ran, failed_then_hung)] == [
        Outcome.SURVIVED,
        Outcome.KILLED,
        Outcome.TIMEOUT,
        Outcome.KILLED,
        Outcome.UNJUDGED,
        Outcome.UNJUDGED,
        Outcome.KILLED,
    ]


def trial(line: int, before: str, after: str) -> Trial:
    return Trial(Mutant("pkg/m.py", line, "compare", before, after, b""), ("t.py::test_a",), 10.0)


def test_bites_reads_killed_of_tried_and_names_each_survivor() -> None:
    trials = (trial(2, "if n > 10:", "if n >= 10:"), trial(3, "return 10", "return None"), trial(4, "return n", ""))
    assert judge_bites(trials, [Outcome.KILLED] * 3, 0) == CheckResult(
        CheckId.BITES, Status.PASS, "3 of 3 mutants killed"
    )
    found = judge_bites(trials, [Outcome.SURVIVED, Outcome.KILLED, Outcome.UNJUDGED], 4)
    assert found.status is Status.REVIEW
    assert found.detail.splitlines() == [
        "1 of 3 mutants killed, 1 survived: pkg/m.py:2: if n > 10:  ->  if n >= 10:, 1 could not be judged "
        "(their tests did not run); 4 not tried (mutant_cap)",
        "survived: pkg/m.py:2: if n > 10:  ->  if n >= 10:",
        "not judged: pkg/m.py:4: return n  ->  (removed)",
    ]


def test_findings_come_back_as_notes_on_heads_lines() -> None:
    bites = judge_bites(
        (trial(2, "if n > 10:", "if n >= 10:"), trial(4, "return n", "")), [Outcome.SURVIVED, Outcome.SURVIVED], 0
    ).detail
    covered = "1 of 3 changed lines run under no test: pkg/m.py:3\npkg/m.py:3: return 10"
    assert code_notes({CheckId.BITES: bites, CheckId.COVERED: covered}) == {
        "pkg/m.py": {
            2: ["mutant survived: n > 10:  ->  n >= 10:"],
            3: ["runs under no test"],
            4: ["mutant survived: return n  ->  (removed)"],
        }
    }


def test_timeouts_are_counted_apart_and_caught_unless_they_are_most() -> None:
    trials = tuple(trial(2, "if n > 10:", f"if n > {k}:") for k in range(10))
    some = judge_bites(trials, [Outcome.KILLED] * 8 + [Outcome.TIMEOUT] * 2, 0)
    assert some == CheckResult(CheckId.BITES, Status.PASS, "8 of 10 mutants killed, 2 timed out")
    half = judge_bites(trials, [Outcome.KILLED] * 5 + [Outcome.TIMEOUT] * 5, 0)
    assert (half.status, half.detail) == (Status.PASS, "5 of 10 mutants killed, 5 timed out")
    most = judge_bites(trials[:3], [Outcome.TIMEOUT, Outcome.TIMEOUT, Outcome.KILLED], 0)
    assert most.status is Status.REVIEW
    assert most.detail.splitlines() == [
        "most mutants only timed out: 1 of 3 mutants killed, 2 timed out (a test that runs on when the answer is "
        "wrong, rather than failing, stops every mutant this way)",
        "timed out: pkg/m.py:2: if n > 10:  ->  if n > 0:",
        "timed out: pkg/m.py:2: if n > 10:  ->  if n > 1:",
    ]
    assert code_notes({CheckId.BITES: most.detail}) == {
        "pkg/m.py": {2: ["mutant timed out: > 10:  ->  > 0:", "mutant timed out: > 10:  ->  > 1:"]}
    }


def test_a_survivor_beside_timeouts_says_both() -> None:
    trials = (trial(2, "if n > 10:", "if n >= 10:"), trial(3, "return 10", "return None"))
    found = judge_bites(trials, [Outcome.SURVIVED, Outcome.TIMEOUT], 0)
    assert (found.status, found.detail.splitlines()) == (
        Status.REVIEW,
        [
            "0 of 2 mutants killed, 1 timed out, 1 survived: pkg/m.py:2: if n > 10:  ->  if n >= 10:",
            "survived: pkg/m.py:2: if n > 10:  ->  if n >= 10:",
        ],
    )


def test_a_survivor_told_apart_is_shown_with_the_input_and_both_results() -> None:
    trials = (trial(2, "if n > 10:", "if n >= 10:"), trial(3, "return 10", "return None"))
    told = {0: Found("clamp(10)", "10", "None")}
    found = judge_bites(trials, [Outcome.SURVIVED, Outcome.KILLED], 0, found=told)
    assert (found.status, found.detail.splitlines()) == (
        Status.REVIEW,
        [
            "1 of 2 mutants killed, 1 survived: pkg/m.py:2: if n > 10:  ->  if n >= 10:",
            "survived: pkg/m.py:2: if n > 10:  ->  if n >= 10:",
            "told apart: pkg/m.py:2: clamp(10) gives 10 here, None with `n >= 10:`; no test checks it",
        ],
    )
    assert code_notes({CheckId.BITES: found.detail}) == {
        "pkg/m.py": {
            2: [
                "mutant survived: n > 10:  ->  n >= 10:",
                "mutant told apart: clamp(10) gives 10 here, None with `n >= 10:`; no test checks it",
            ]
        }
    }


def test_a_survivor_searched_thoroughly_in_vain_is_likely_equivalent_and_passes() -> None:
    trials = (trial(2, "if n > 10:", "if n >= 10:"), trial(3, "return 10", "return None"))
    found = judge_bites(trials, [Outcome.SURVIVED, Outcome.KILLED], 0, found={0: Found(returned=THOROUGH)})
    assert (found.status, found.detail.splitlines()) == (
        Status.PASS,
        [
            "1 of 2 mutants killed, 1 likely equivalent (no input told it apart)",
            "likely equivalent: pkg/m.py:2: if n > 10:  ->  if n >= 10:",
        ],
    )
    assert code_notes({CheckId.BITES: found.detail}) == {
        "pkg/m.py": {2: ["mutant likely equivalent: n > 10:  ->  n >= 10:"]}
    }


def test_a_search_that_ran_too_few_inputs_leaves_the_survivor_as_it_was() -> None:
    """The function raised on most inputs (or the search wrote nothing):
    not having found a difference is no evidence there is none."""
    trials = (trial(2, "if n > 10:", "if n >= 10:"),)
    few = judge_bites(trials, [Outcome.SURVIVED], 0, found={0: Found(returned=THOROUGH - 1)})
    assert few == judge_bites(trials, [Outcome.SURVIVED], 0) == judge_bites(trials, [Outcome.SURVIVED], 0, found={})
    assert few.status is Status.REVIEW
    every = judge_bites(trials, [Outcome.SURVIVED], 0, found={0: Found(returned=FEW, every=True)})
    assert every.status is Status.PASS  # a narrow span, tried whole
    assert judge_bites(trials, [Outcome.SURVIVED], 0, found={0: Found(returned=FEW - 1, every=True)}) == few


# A module whose changed lines all ran only at import, but in different places.
AT_IMPORT = (
    "import functools\n\nLIMIT = 10\n\n\n@functools.lru_cache(maxsize=4)\ndef clamp(n, top=LIMIT):\n"
    "    return min(n, top)\n\n\ndef double(n): return n * 2\n\n\nclass Box:\n    SIZE = 3\n"
)
AT_IMPORT_LINES = frozenset({3, 6, 7, 11, 15})
BIG, SMALL = "t.py::test_big", "t.py::test_small"


def at_import(reached: dict[tuple[str, int], frozenset[str]]) -> dict[tuple[str, int], tuple[str, ...]]:
    from gatetui.gate.judging.mutants import audiences
    from gatetui.stacks.python.function_headers import headers

    changed = ChangedCode(
        {"pkg/m.py": AT_IMPORT_LINES},
        {"pkg/m.py": AT_IMPORT},
        headers={"pkg/m.py": headers(AT_IMPORT, AT_IMPORT_LINES)},
    )
    return audiences(changed, reached, frozenset({BIG, SMALL}))


def test_a_line_run_only_at_import_is_judged_by_the_tests_of_its_functions_body_or_the_whole_suite() -> None:
    reached = {("pkg/m.py", n): frozenset() for n in AT_IMPORT_LINES}
    reached[("pkg/m.py", 8)] = frozenset({BIG, "t.py::test_failing"})  # clamp's body, under tests
    assert at_import(reached) == {
        ("pkg/m.py", 3): (),  # a module constant: the whole suite
        ("pkg/m.py", 6): (BIG,),
        ("pkg/m.py", 7): (BIG,),  # clamp's decorator and its default: its body's tests
        ("pkg/m.py", 11): (),  # a one-line def whose body never ran under a test
        ("pkg/m.py", 15): (),  # a class attribute
    }
    del reached[("pkg/m.py", 3)]  # a line that never ran is covered's, never tried
    reached[("pkg/m.py", 11)] = frozenset({SMALL})  # double's body ran under a test: an ordinary line
    reached[("pkg/m.py", 8)] = frozenset({"t.py::test_failing"})  # only a test failing at head ran clamp's body
    assert at_import(reached) == {
        ("pkg/m.py", 6): (),
        ("pkg/m.py", 7): (),
        ("pkg/m.py", 11): (SMALL,),
        ("pkg/m.py", 15): (),
    }


def test_whole_suite_mutants_are_few_and_timed_by_the_whole_suite() -> None:
    from gatetui.gate.judging.mutants import WHOLE_SUITE

    text = "".join(f"A{n} = {n} + 1\n" for n in range(1, 9))
    changed = ChangedCode({"pkg/c.py": frozenset(range(1, 9))}, {"pkg/c.py": text})
    reached = {("pkg/c.py", n): frozenset() for n in range(1, 9)}
    runs = [
        run(
            result=CommandResult(exit_code=0, wall_seconds=12.0),
            **{"t.py__test_a": (Case.PASSED, 2.0), "t.py__test_b": (Case.PASSED, 4.0)},
        )
    ]
    chosen = choose(changed, reached, runs, mutate, cap=20, limit=900.0)
    assert [(t.mutant.line, t.tests) for t in chosen.trials] == [(n, ()) for n in range(1, WHOLE_SUITE + 1)]
    total = len(mutate("pkg/c.py", text, frozenset(range(1, 9))))
    assert (chosen.untried, chosen.bounded) == (total - WHOLE_SUITE, total - WHOLE_SUITE)
    assert {t.timeout for t in chosen.trials} == {3.0 * 12.0}  # the whole suite's tests and start, three times
    assert judge_bites(chosen.trials, [Outcome.KILLED] * WHOLE_SUITE, chosen.untried, chosen.bounded).detail == (
        f"4 of 4 mutants killed; {total - 4} not tried (at most 4 mutants run the whole suite)"
    )
    capped = choose(changed, reached, runs, mutate, cap=2, limit=900.0)
    assert (len(capped.trials), capped.untried, capped.bounded) == (2, total - 2, 0)
    assert judge_bites(chosen.trials[:3], [Outcome.KILLED] * 3, 9, 2).detail == (
        "3 of 3 mutants killed; 9 not tried (mutant_cap, and at most 4 mutants run the whole suite)"
    )
