"""A test that failed in the reruns, confirmed in fresh processes before it
is named flaky: what the fresh runs say, and how `runs` says it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gatetui.backends.base import CommandResult
from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.judging import fresh, reruns
from gatetui.gate.judging.fresh import Cause, Confirmation
from gatetui.gate.judging.results import SuiteRun, with_reruns
from gatetui.gate.reports.junit import Outcome, Report, TestResult, parse_junit
from gatetui.stacks.python.profile import RERUN

OK = CommandResult(exit_code=0, wall_seconds=1.0)
FAILED = CommandResult(exit_code=1, wall_seconds=1.0)
PASSED = CheckResult(CheckId.RUNS, Status.PASS, "3 of 3 runs passed")
P, F = Outcome.PASSED, Outcome.FAILED
T = "t.py::test_a"


def report(outcomes: dict[str, Outcome]) -> Report:
    return Report.from_results(TestResult(i, o) for i, o in outcomes.items())


def alone(outcome: Outcome, test: str = T) -> Report:
    return report({test: outcome})


def repeated(*steps: Outcome, test: str = T) -> Report:
    return report({f"{test}[gatetui-rerun-{n}]": o for n, o in enumerate(steps, 1)})


def by_turns(first: Outcome, again: Outcome, afresh: Outcome) -> Report:
    """The repeated process's steps: alone, then again and afresh by turns."""
    return repeated(first, *(afresh if n in fresh.AFRESH else again for n in range(2, fresh.STEPS + 1)))


def test_the_repeated_process_runs_the_test_module_afresh_every_other_step() -> None:
    assert (fresh.STEPS, fresh.AFRESH) == (13, (3, 5, 7, 9, 11, 13))


@pytest.mark.parametrize(
    "runs, again, cause",
    [
        ([alone(P), alone(F)], None, Cause.FLAKY),  # fails alone in the second fresh process
        ([alone(P)] * 3, by_turns(F, F, F), Cause.FLAKY),  # fails alone in the last one's first step
        ([alone(P)] * 3, by_turns(P, F, F), Cause.PROCESS_STATE),  # module afresh does not help: the interpreter's
        ([alone(P)] * 3, by_turns(P, F, P), Cause.OWN_STATE),  # module afresh helps: state its test module keeps
        ([alone(P)] * 3, by_turns(P, P, P), Cause.BESIDE_OTHERS),  # repeated alone it passes
        ([alone(P)] * 3, by_turns(P, P, F), Cause.BESIDE_OTHERS),  # again it passes; its module cannot run twice
        ([alone(P)] * 3, repeated(P, F, F, P, *[F] * 9), Cause.CHANCE),  # the same state, two answers
        ([alone(P)] * 3, repeated(P, F, P, F, F, *[F, P] * 4), Cause.CHANCE),
        ([None], None, Cause.UNCONFIRMED),  # no report
        ([alone(P, "t.py::test_other")], None, Cause.UNCONFIRMED),  # the id was not run
        ([alone(P)] * 3, None, Cause.UNCONFIRMED),
        ([alone(P)] * 3, repeated(P, F, F), Cause.UNCONFIRMED),  # steps missing
    ],
)
def test_the_fresh_processes_say_why_a_rerun_failed(
    runs: list[Report | None], again: Report | None, cause: Cause
) -> None:
    assert fresh.confirm(T, runs, again) == Confirmation(T, cause)


def test_a_parametrized_case_is_read_by_its_own_id() -> None:
    case = "t.py::test_p[1]"
    steps = report(
        {
            **{f"t.py::test_p[1-gatetui-rerun-{n}]": P if n == 1 else F for n in range(1, 14)},
            "t.py::test_p[2-gatetui-rerun-1]": F,
        }
    )
    assert fresh.confirm(case, [alone(P, case)] * 3, steps).cause is Cause.PROCESS_STATE


def run_1(cases: dict[str, Outcome], *confirmed: Confirmation) -> list[SuiteRun]:
    again = SuiteRun("reruns", FAILED, report(cases))
    return [SuiteRun("run 1", OK, report({T: P}), reruns=again, confirmed=confirmed)]


FIVE_OF_SIX = {f"{T}[gatetui-rerun-{n}]": P if n == 1 else F for n in range(1, 7)}


def test_a_test_that_checks_process_fresh_state_is_a_note_not_a_flake() -> None:
    result = with_reruns(PASSED, run_1(FIVE_OF_SIX, Confirmation(T, Cause.PROCESS_STATE)))
    assert result == CheckResult(
        CheckId.RUNS,
        Status.PASS,
        (
            "3 of 3 runs passed; t.py::test_a failed 5 of 6 reruns but passes in fresh processes, "
            "fails when repeated in one: not judged flaky"
        ),
    )


def test_a_test_failing_only_beside_others_is_a_note_too() -> None:
    result = with_reruns(PASSED, run_1(FIVE_OF_SIX, Confirmation(T, Cause.BESIDE_OTHERS)))
    assert (result.status, result.detail.split("; ", 1)[1]) == (
        Status.PASS,
        (
            "t.py::test_a failed 5 of 6 reruns but passes in fresh processes, alone and repeated: "
            "failed only beside other tests; not judged flaky"
        ),
    )


def test_a_test_failing_in_a_fresh_process_is_flaky() -> None:
    once = {f"{T}[gatetui-rerun-3]": F, f"{T}[gatetui-rerun-1]": P}
    assert with_reruns(PASSED, run_1(once, Confirmation(T, Cause.FLAKY))) == CheckResult(
        CheckId.RUNS,
        Status.FAIL,
        "3 of 3 runs passed, but flaky: t.py::test_a failed 1 of 6 reruns, and again alone in a fresh process",
    )


def test_a_test_answering_both_ways_where_its_state_is_the_same_is_flaky() -> None:
    result = with_reruns(PASSED, run_1(FIVE_OF_SIX, Confirmation(T, Cause.CHANCE)))
    assert (result.status, result.detail) == (
        Status.FAIL,
        (
            "3 of 3 runs passed, but flaky: t.py::test_a failed 5 of 6 reruns, and again in a fresh process, "
            "where repeated with the same state it answered both ways"
        ),
    )


def test_a_test_leaning_on_its_own_module_state_is_still_flaky() -> None:
    """flaky_new_test's test appends to a module-level list: it passes once
    per process too, but the state it fails on is its own test code's."""
    result = with_reruns(PASSED, run_1(FIVE_OF_SIX, Confirmation(T, Cause.OWN_STATE)))
    assert result == CheckResult(
        CheckId.RUNS,
        Status.FAIL,
        (
            "3 of 3 runs passed, but flaky: t.py::test_a failed 5 of 6 reruns; it passes in fresh processes, but "
            "repeated in one fails on state its own test module keeps (passes with the module loaded afresh)"
        ),
    )


def test_flaky_tests_are_named_and_cleared_ones_noted() -> None:
    lazy = "t.py::test_lazy"
    cases = {**FIVE_OF_SIX, f"{lazy}[gatetui-rerun-2]": F, "t.py::test_c[gatetui-rerun-2]": F}
    result = with_reruns(PASSED, run_1(cases, Confirmation(T, Cause.FLAKY), Confirmation(lazy, Cause.PROCESS_STATE)))
    assert result == CheckResult(
        CheckId.RUNS,
        Status.FAIL,
        (
            "3 of 3 runs passed, but flaky: t.py::test_a, t.py::test_c (t.py::test_a failed 5 of 6 reruns, "
            "and again alone in a fresh process); t.py::test_lazy failed 1 of 6 reruns but passes in fresh "
            "processes, fails when repeated in one: not judged flaky"
        ),
    )


# --- the fresh processes for real: pytest with the gate's rerun plugin ------------------------

LAZY = """import sys

import lazypkg


def test_lazy():
    assert "lazypkg.table" not in sys.modules
    assert lazypkg.table.ROWS == 3
    assert "lazypkg.table" in sys.modules
"""
OWN = """import pytest

_seen = []


@pytest.mark.parametrize("n", [1, 2])
def test_remembers(n):
    _seen.append(n)
    assert _seen == [n]
"""
RANDOM = """from pathlib import Path

COUNT = Path(__file__).with_name("count")


def test_one_in_three():
    runs = int(COUNT.read_text()) + 1 if COUNT.exists() else 1
    COUNT.write_text(str(runs))
    assert runs % 3 != 0
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "lazypkg").mkdir()
    (tmp_path / "lazypkg" / "__init__.py").write_text(
        "import importlib\n\n\ndef __getattr__(name):\n    return importlib.import_module('lazypkg.' + name)\n"
    )
    (tmp_path / "lazypkg" / "table.py").write_text("ROWS = 3\n")
    (tmp_path / "tests").mkdir()
    for name, text in (("test_lazy.py", LAZY), ("test_own.py", OWN), ("test_random.py", RANDOM)):
        (tmp_path / "tests" / name).write_text(text)
    for name, data in RERUN.files.items():
        (tmp_path / "gate").mkdir(exist_ok=True)
        (tmp_path / "gate" / name).write_bytes(data)
    return tmp_path


def pytest_run(project: Path, test: str, plugin: dict[str, str]) -> Report | None:
    """One fresh pytest process running `test`, as the gate runs one."""
    out = project / "r.xml"
    out.unlink(missing_ok=True)
    addopts = f"-p no:randomly -p no:cacheprovider -o junit_family=xunit1 --junitxml={out}"
    env = {**os.environ, "PYTHONPATH": str(project), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **plugin}
    env["PYTEST_ADDOPTS"] = f"{addopts} {plugin.get('PYTEST_ADDOPTS', '')}"
    if "PYTHONPATH" in plugin:
        env["PYTHONPATH"] = f"{project}{os.pathsep}{plugin['PYTHONPATH']}"
    subprocess.run(
        ["bash", "-c", reruns.command(f"{sys.executable} -m pytest", [test])],
        cwd=project,
        env=env,
        timeout=120,
        check=False,
    )
    return parse_junit(out.read_bytes(), ids="pytest") if out.exists() else None


def confirmed(project: Path, test: str) -> Confirmation:
    """What FreshRuns does in a run's copy: alone, up to three processes, then repeated."""
    runs: list[Report | None] = []
    while len(runs) < fresh.PROCESSES and all(fresh.alone_passed(r, test) for r in runs):
        runs.append(pytest_run(project, test, {}))
    if not all(fresh.alone_passed(r, test) for r in runs):
        return fresh.confirm(test, runs, None)
    plugin = RERUN.env_for(
        str(project / "gate"),
        reruns=fresh.STEPS,
        afresh=",".join(map(str, fresh.AFRESH)),
        only=test.rsplit("::", 1)[-1],
    )
    return fresh.confirm(test, runs, pytest_run(project, reruns.function_of(test), plugin))


@pytest.mark.drives
def test_fresh_processes_clear_a_lazy_import_test_and_confirm_the_others(project: Path) -> None:
    assert confirmed(project, "tests/test_lazy.py::test_lazy") == Confirmation(
        "tests/test_lazy.py::test_lazy", Cause.PROCESS_STATE
    )
    assert confirmed(project, "tests/test_own.py::test_remembers[2]") == Confirmation(
        "tests/test_own.py::test_remembers[2]", Cause.OWN_STATE
    )
    (project / "tests" / "count").write_text("7")  # as after run 1 and its six reruns
    assert confirmed(project, "tests/test_random.py::test_one_in_three") == Confirmation(
        "tests/test_random.py::test_one_in_three", Cause.FLAKY
    )


def test_one_case_per_function_is_asked_the_one_that_failed_least() -> None:
    """humanize 4.11: 57 cases of test_naturalsize failed the reruns on a
    locale another test left active; one fresh answer stands for them."""
    failed = {f"t.py::test_size[case{i}]": 5 for i in range(57)}
    failed["t.py::test_size[case30]"] = 2  # a case failing by chance fails less often: it is the one asked
    failed["t.py::test_other"] = 6
    assert fresh.representatives(failed) == {
        "t.py::test_size": "t.py::test_size[case30]",
        "t.py::test_other": "t.py::test_other",
    }


def test_the_functions_past_the_cap_are_not_asked() -> None:
    failed = {f"t.py::test_{name}": 6 for name in "gfedcba"}
    assert list(fresh.representatives(failed).values()) == [f"t.py::test_{name}" for name in "abcde"]
