"""One run's outcomes, by test id: what every report reader makes.

The gate reads JUnit XML itself (gate/reports/junit.py); a stack whose runner writes
another format reads it into these same records (`ReportFormat.read`), so
they live here, below both. Comparisons of runs are gate/reports/compare.py's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType

__all__ = ["COLLECTION_FAILURE", "SEVERITY", "VERDICT", "Outcome", "Report", "ReportError", "TestResult"]


class ReportError(Exception):
    """The report cannot be read; the message is one line, fit for a user."""


class Outcome(str, Enum):
    """What happened to one test in one run."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"


# When one id appears more than once (pytest writes a second <testcase> for a
# teardown error; node 20 cannot tell two files' same-named tests apart), the
# gate must not hide trouble, so the entry that is least evidence the test is
# fine wins: errors and failures first, then tests that never really passed.
SEVERITY = {
    Outcome.PASSED: 0,
    Outcome.XPASSED: 1,
    Outcome.XFAILED: 2,
    Outcome.SKIPPED: 3,
    Outcome.FAILED: 4,
    Outcome.ERROR: 5,
}

# The three classes that flakiness is judged on: an xpass is a pass and an
# xfail is a skip as far as "did this test behave the same way" goes.
VERDICT = {
    Outcome.PASSED: "pass",
    Outcome.XPASSED: "pass",
    Outcome.FAILED: "fail",
    Outcome.ERROR: "fail",
    Outcome.SKIPPED: "skip",
    Outcome.XFAILED: "skip",
}


COLLECTION_FAILURE = "collection failure"  # pytest's message for a file it could not collect


@dataclass(frozen=True)
class TestResult:
    """One test's outcome in one run."""

    __test__ = False  # not a pytest test class, despite the name

    id: str
    outcome: Outcome
    message: str = ""
    file: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class Report:
    """All tests of one run, by id; read-only so runs can be shared freely.

    `findings` are what the reader saw wrong with the report's own shape,
    each one line naming a test or package: a test reported twice, one
    that started and never ended, a package whose runner never said its
    last word. The report is written by code under test, so such a shape
    is what a test printing reports for other tests leaves behind; a run
    with a finding fails, whatever its tests say (`passed_all`).
    """

    tests: Mapping[str, TestResult] = field(default_factory=dict)
    findings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "tests", MappingProxyType(dict(self.tests)))

    @classmethod
    def from_results(cls, results: Iterable[TestResult], findings: Iterable[str] = ()) -> Report:
        """Build a report, keeping the worst result of any repeated id."""
        merged: dict[str, TestResult] = {}
        for result in results:
            kept = merged.get(result.id)
            if kept is None or SEVERITY[result.outcome] > SEVERITY[kept.outcome]:
                merged[result.id] = result
        return cls(merged, tuple(findings))

    def count(self, outcome: Outcome) -> int:
        """How many tests ended with `outcome`."""
        return sum(1 for result in self.tests.values() if result.outcome == outcome)

    def failed(self) -> list[TestResult]:
        """Failed and errored tests, in report order."""
        bad = (Outcome.FAILED, Outcome.ERROR)
        return [result for result in self.tests.values() if result.outcome in bad]

    @property
    def passed_all(self) -> bool:
        """True when something really passed and nothing failed.

        A run where every test was skipped or xfailed proves nothing, so it
        does not count as passing; nor does one whose report does not hold
        together (`findings`).
        """
        if self.findings or self.failed():
            return False
        return any(VERDICT[r.outcome] == "pass" for r in self.tests.values())


# ---------------------------------------------------------------- comparisons
