"""`bites`' control (gate/phases/control.py) without a sandbox: which kills
a control run voids. The runs are SuiteRuns as the bites phase reads them;
tests/gated/test_mutant_runs_gated.py runs the same control for real."""

from __future__ import annotations

import asyncio

from gatetui.backends.base import CommandResult
from gatetui.gate.judging.mutants import Outcome, Trial
from gatetui.gate.judging.results import SuiteRun
from gatetui.gate.phases.control import ROUNDS, verified
from gatetui.gate.reports.junit import Outcome as Case
from gatetui.gate.reports.junit import Report, TestResult
from gatetui.stacks.mutation import Mutant

TEXTS = {"pkg/m.py": "def f(n):\n    return n\n"}


def trial(tests: tuple[str, ...]) -> Trial:
    return Trial(Mutant("pkg/m.py", 2, "return-none", "return n", "return None", b""), tests, 10.0)


def run(**cases: Case) -> SuiteRun:
    results = [TestResult(name.replace("_py__", ".py::"), case, seconds=0.1) for name, case in cases.items()]
    return SuiteRun(
        "r",
        CommandResult(exit_code=1 if Case.FAILED in cases.values() else 0, wall_seconds=1.0),
        Report.from_results(results),
    )


class Control:
    """A control that answers from a script, one run per round, and keeps what it was asked."""

    def __init__(self, *answers: tuple[Outcome, SuiteRun]):
        self.answers, self.asked = list(answers), []

    async def __call__(self, name: str, asked: Trial) -> tuple[Outcome, SuiteRun]:
        self.asked.append((name, asked.tests, asked.mutant.source))
        return self.answers.pop(0)


def judge(trials: list[Trial], tried: list[tuple[Outcome, SuiteRun]], control: Control) -> list[Outcome]:
    return asyncio.run(verified(trials, tried, TEXTS, control))


def test_kills_whose_tests_pass_in_the_control_stand() -> None:
    control = Control((Outcome.SURVIVED, run(t_py__test_a=Case.PASSED)))
    found = judge([trial(("t.py::test_a",))], [(Outcome.KILLED, run(t_py__test_a=Case.FAILED))], control)
    assert found == [Outcome.KILLED]
    # one control, over the killing test, with head's own text in the mutant's place
    assert control.asked == [("control 1", ("t.py::test_a",), TEXTS["pkg/m.py"].encode())]


def test_a_kill_by_a_test_that_fails_in_the_control_is_spurious() -> None:
    trials = [trial(("t.py::test_a", "t.py::test_b")), trial(("t.py::test_b",))]
    tried = [(Outcome.KILLED, run(t_py__test_a=Case.FAILED)), (Outcome.KILLED, run(t_py__test_b=Case.FAILED))]
    control = Control(
        (Outcome.KILLED, run(t_py__test_a=Case.FAILED)), (Outcome.SURVIVED, run(t_py__test_b=Case.PASSED))
    )
    assert judge(trials, tried, control) == [Outcome.SPURIOUS, Outcome.KILLED]
    assert [tests for _, tests, _ in control.asked] == [("t.py::test_a", "t.py::test_b"), ("t.py::test_b",)]


def test_a_control_that_breaks_or_never_passes_verifies_nothing() -> None:
    tried = [(Outcome.KILLED, run(t_py__test_a=Case.FAILED)), (Outcome.SURVIVED, run(t_py__test_a=Case.PASSED))]
    trials = [trial(("t.py::test_a",)), trial(("t.py::test_a",))]
    broke = Control((Outcome.KILLED, SuiteRun("r", CommandResult(exit_code=1, wall_seconds=1.0), None)))
    assert judge(trials, tried, broke) == [Outcome.SPURIOUS, Outcome.SURVIVED]
    spun = Control(
        (Outcome.TIMEOUT, SuiteRun("r", CommandResult(exit_code=-9, wall_seconds=9.0, timed_out=True), None))
    )
    assert judge(trials, tried, spun) == [Outcome.SPURIOUS, Outcome.SURVIVED]
    many = [trial(tuple(f"t.py::test_{i}" for i in range(ROUNDS + 1)))]
    failing = [(Outcome.KILLED, run(**{f"t_py__test_{i}": Case.FAILED})) for i in range(ROUNDS)]
    assert judge(many, [(Outcome.KILLED, run(t_py__test_0=Case.FAILED))], Control(*failing)) == [Outcome.SPURIOUS]


def test_no_kill_no_control() -> None:
    control = Control()
    assert judge([trial(("t.py::test_a",))], [(Outcome.SURVIVED, run(t_py__test_a=Case.PASSED))], control) == [
        Outcome.SURVIVED
    ]
    assert control.asked == []


def twin_of(text: str, lines: frozenset[int]) -> bytes:
    return f"# twin of lines {sorted(lines)}\n{text}".encode()


def test_the_control_runs_the_stacks_twin_of_the_file_on_the_killed_mutants_lines() -> None:
    texts = {"pkg/m.py": "def f(n):\n    x = n\n    return x\n"}
    trials = [
        Trial(Mutant("pkg/m.py", 2, "constant", "x = n", "x = None", b""), ("t.py::test_a",), 10.0),
        Trial(Mutant("pkg/m.py", 3, "return-none", "return x", "return None", b""), ("t.py::test_a",), 10.0),
    ]
    tried = [(Outcome.KILLED, run(t_py__test_a=Case.FAILED))] * 2
    control = Control((Outcome.SURVIVED, run(t_py__test_a=Case.PASSED)))
    assert asyncio.run(verified(trials, tried, texts, control, twin_of)) == [Outcome.KILLED, Outcome.KILLED]
    assert control.asked == [("control 1", ("t.py::test_a",), twin_of(texts["pkg/m.py"], frozenset({2, 3})))]


def test_each_file_whose_mutants_were_killed_gets_a_control_of_its_own() -> None:
    texts = {"pkg/a.py": "A = 1\n", "pkg/b.py": "B = 2\n"}
    trials = [
        Trial(Mutant("pkg/b.py", 1, "constant", "B = 2", "B = 3", b""), ("t.py::test_b",), 10.0),
        Trial(Mutant("pkg/a.py", 1, "constant", "A = 1", "A = 2", b""), ("t.py::test_a",), 10.0),
    ]
    tried = [(Outcome.KILLED, run(t_py__test_b=Case.FAILED)), (Outcome.KILLED, run(t_py__test_a=Case.FAILED))]
    control = Control(
        (Outcome.SURVIVED, run(t_py__test_a=Case.PASSED)), (Outcome.KILLED, run(t_py__test_b=Case.FAILED))
    )
    # pkg/a.py's control first (files in order): its kill stands; pkg/b.py's test fails its control too
    assert asyncio.run(verified(trials, tried, texts, control, twin_of)) == [Outcome.SPURIOUS, Outcome.KILLED]
    assert control.asked == [
        ("control 1", ("t.py::test_a",), twin_of("A = 1\n", frozenset({1}))),
        ("control 1", ("t.py::test_b",), twin_of("B = 2\n", frozenset({1}))),
    ]


def test_without_a_twin_the_control_runs_heads_own_text() -> None:
    control = Control((Outcome.SURVIVED, run(t_py__test_a=Case.PASSED)))
    no_twin = asyncio.run(
        verified(
            [trial(("t.py::test_a",))],
            [(Outcome.KILLED, run(t_py__test_a=Case.FAILED))],
            TEXTS,
            control,
            lambda text, lines: None,
        )
    )
    assert (no_twin, control.asked[0][2]) == ([Outcome.KILLED], TEXTS["pkg/m.py"].encode())
