"""Reruns of head's new and changed tests: which run again, and how they are read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gatetui.backends.base import CommandResult
from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.diff.changed_tests import ChangedTests
from gatetui.gate.judging import reruns
from gatetui.gate.judging.results import SuiteRun, with_reruns
from gatetui.gate.reports.junit import Outcome, Report, TestResult, parse_junit
from gatetui.git.snapshot import Snapshot
from gatetui.stacks.python.profile import RERUN

OK = CommandResult(exit_code=0, wall_seconds=1.0)
PASSED = CheckResult(CheckId.RUNS, Status.PASS, "3 of 3 runs passed")


def report(**outcomes: Outcome) -> Report:
    return Report.from_results(TestResult(k.replace("__", "::"), v) for k, v in outcomes.items())


def test_only_tests_in_changed_files_run_again_by_function() -> None:
    run1 = Report.from_results(
        TestResult(i, Outcome.PASSED)
        for i in (
            "tests/test_new.py::test_a[1]",
            "tests/test_new.py::test_a[2]",
            "tests/test_new.py::K::test_b",
            "tests/test_old.py::test_c",
            "tests/test_broken.py",
        )
    )
    assert reruns.targets(run1, lambda test: not test.startswith("tests/test_old.py::")) == [
        "tests/test_new.py::K::test_b",
        "tests/test_new.py::test_a",
    ]


def test_only_the_tests_head_added_or_changed_run_again() -> None:
    """Honest work on a real project: a test added beside one that checks process-fresh state
    reran the whole file, and the old test, repeated in one process, was
    named flaky. Only the new test and the one whose lines changed run again."""
    base = "import sys\n\n\ndef test_lazy():\n    assert 'pkg.t' not in sys.modules\n\n\ndef test_b():\n    pass\n"
    head = base.replace("import sys\n", "import sys  # a comment\n") + "\n\ndef test_new():\n    pass\n"
    changed = ChangedTests(Snapshot.of_files({"t/test_x.py": base}), Snapshot.of_files({"t/test_x.py": head}))
    run1 = report(**{f"t/test_x.py__{name}": Outcome.PASSED for name in ("test_lazy", "test_b", "test_new")})
    assert reruns.targets(run1, changed) == ["t/test_x.py::test_new"]


def test_failures_are_counted_by_the_tests_own_id() -> None:
    ids = {
        "t.py::test_a[gatetui-rerun-1]": Outcome.PASSED,
        "t.py::test_a[gatetui-rerun-2]": Outcome.FAILED,
        "t.py::test_p[1-gatetui-rerun-3]": Outcome.ERROR,
        "t.py::test_p[1-gatetui-rerun-4]": Outcome.FAILED,
        "t.py::test_p[2-gatetui-rerun-1]": Outcome.PASSED,
    }
    found = reruns.failures(Report.from_results(TestResult(i, o) for i, o in ids.items()))
    assert found == {"t.py::test_a": 1, "t.py::test_p[1]": 2}


def runs_with(again: SuiteRun) -> list[SuiteRun]:
    return [SuiteRun("run 1", OK, report(t__a=Outcome.PASSED), reruns=again)]


def test_a_rerun_failure_makes_a_passing_suite_flaky() -> None:
    again = SuiteRun(
        "reruns",
        CommandResult(exit_code=1, wall_seconds=1.0),
        report(**{"t__a[gatetui-rerun-2]": Outcome.FAILED, "t__a[gatetui-rerun-1]": Outcome.PASSED}),
    )
    assert with_reruns(PASSED, runs_with(again)) == CheckResult(
        CheckId.RUNS, Status.FAIL, "3 of 3 runs passed, but flaky: t::a failed 1 of 6 reruns"
    )


def test_reruns_that_pass_are_said_and_reruns_without_a_report_fail() -> None:
    fine = SuiteRun("reruns", OK, report(**{"t__a[gatetui-rerun-1]": Outcome.PASSED}))
    assert (
        with_reruns(PASSED, runs_with(fine)).detail
        == "3 of 3 runs passed; head's new and changed tests passed 6 reruns"
    )
    lost = SuiteRun("reruns", CommandResult(exit_code=0, wall_seconds=1.0), None, "no report written")
    assert with_reruns(PASSED, runs_with(lost)) == CheckResult(
        CheckId.RUNS,
        Status.FAIL,
        "3 of 3 runs passed, but reruns wrote no test report (no report written; exit code 0)",
    )


@pytest.mark.drives
def test_the_plugin_repeats_functions_parametrized_cases_and_methods(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(
        "import pytest\n\n\n@pytest.mark.parametrize('n', [1, 2])\ndef test_p(n):\n    pass\n\n\n"
        "class TestK:\n    def test_m(self):\n        pass\n"
    )
    for name, data in RERUN.files.items():
        (tmp_path / "gate" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "gate" / name).write_bytes(data)
    env = {**os.environ, **RERUN.env_for(str(tmp_path / "gate"), reruns=reruns.RERUNS, afresh="", only="")}
    env["PYTEST_ADDOPTS"] += " -p no:randomly"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "junit_family=xunit1",
            f"--junitxml={tmp_path / 'r.xml'}",
            "tests/test_x.py::test_p",
            "tests/test_x.py::TestK::test_m",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ids = parse_junit((tmp_path / "r.xml").read_bytes(), ids="pytest").tests
    assert sorted(ids) == sorted(
        [f"tests/test_x.py::test_p[{n}-gatetui-rerun-{i}]" for n in (1, 2) for i in range(1, 7)]
        + [f"tests/test_x.py::TestK::test_m[gatetui-rerun-{i}]" for i in range(1, 7)]
    )


def test_failures_base_already_had_are_not_flaky_with_the_baseline() -> None:
    again = SuiteRun(
        "reruns", CommandResult(exit_code=1, wall_seconds=1.0), report(**{"t__known[gatetui-rerun-1]": Outcome.FAILED})
    )
    assert with_reruns(PASSED, runs_with(again), frozenset({"t::known"})).status is Status.PASS


@pytest.mark.drives
def test_the_reruns_output_is_not_carried(tmp_path: Path) -> None:
    """Six reruns of a test that floods its output would be six floods:
    only the report is read, so the output goes nowhere."""
    (tmp_path / "test_loud.py").write_text("def test_loud():\n    print('x' * 100_000)\n    assert False\n")
    report = tmp_path / "r.xml"
    env = {
        **os.environ,
        "PYTEST_ADDOPTS": f"-p no:randomly -p no:cacheprovider -o junit_family=xunit1 --junitxml={report}",
    }
    done = subprocess.run(
        ["bash", "-c", reruns.command(f"{sys.executable} -m pytest -s", ["test_loud.py::test_loud"])],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout, done.stderr) == (1, "", "")
    assert reruns.failures(parse_junit(report.read_bytes(), ids="pytest")) == {"test_loud.py::test_loud": 1}
