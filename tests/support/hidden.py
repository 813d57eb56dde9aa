"""Hidden tests as the supervisor's store holds them, and suite runs with the
outcomes a judge reads."""

from __future__ import annotations

from gatetui.backends.base import CommandResult
from gatetui.gate.judging.hidden import HiddenTests, select_hidden
from gatetui.gate.judging.results import SuiteRun
from gatetui.gate.reports.junit import Outcome, Report, TestResult

OK = CommandResult(exit_code=0, wall_seconds=1.0)

HIDDEN_SOURCE = (
    b"from mathlib import double\n\n\ndef test_two():\n    assert double(2) == 4\n\n\n"
    b"def test_five():\n    assert double(5) == 10\n"
)


def is_test(path: str) -> bool:
    return path.endswith(".py") and path.rsplit("/", 1)[-1].startswith(("test_", "conftest"))


def hidden(files: dict[str, bytes]) -> HiddenTests:
    found, problem = select_hidden(files, ".", is_test)
    assert problem == ""
    assert found is not None
    return found


def run(report: Report | None, result: CommandResult = OK) -> SuiteRun:
    return SuiteRun("hidden", result, report, "" if report else "no report written")


def results(**outcomes: Outcome) -> Report:
    return Report.from_results(TestResult(f"tests/test_h.py::{k}", v) for k, v in outcomes.items())


BASE = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "mathlib"\nversion = "0.1.0"\n\n[tool.setuptools]\npackages = ["mathlib"]\n\n'
        '[tool.gatetui]\nhidden = "math"\n'
    ),
    "mathlib/__init__.py": "def double(x):\n    return x + x\n",
    "tests/test_math.py": "from mathlib import double\n\n\ndef test_double():\n    assert double(3) == 6\n",
}
