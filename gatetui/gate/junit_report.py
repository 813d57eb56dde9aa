"""A run's outcomes, by test id, and how runs compare.

Apart from junit.py because nothing here reads XML: junit.py turns a hostile
document into a `Report`, while the judge, the baseline and the hidden tests
work on reports whatever made them (tests build them by hand).  junit.py
re-exports these names, so callers import them from there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType

__all__ = [
    "COLLECTION_FAILURE",
    "DODGED",
    "SEVERITY",
    "Outcome",
    "Report",
    "TestResult",
    "flaky",
    "missing",
    "newly_skipped",
    "uncollected",
]


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
_VERDICT = {
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
    """All tests of one run, by id; read-only so runs can be shared freely."""

    tests: Mapping[str, TestResult] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tests", MappingProxyType(dict(self.tests)))

    @classmethod
    def from_results(cls, results: Iterable[TestResult]) -> Report:
        """Build a report, keeping the worst result of any repeated id."""
        merged: dict[str, TestResult] = {}
        for result in results:
            kept = merged.get(result.id)
            if kept is None or SEVERITY[result.outcome] > SEVERITY[kept.outcome]:
                merged[result.id] = result
        return cls(merged)

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
        does not count as passing.
        """
        if self.failed():
            return False
        return any(_VERDICT[r.outcome] == "pass" for r in self.tests.values())


# ---------------------------------------------------------------- comparisons


def flaky(runs: Sequence[Report]) -> list[str]:
    """Ids that passed, failed or skipped differently across the runs they ran in."""
    seen: dict[str, set[str]] = {}
    for run in runs:
        for test_id, result in run.tests.items():
            seen.setdefault(test_id, set()).add(_VERDICT[result.outcome])
    return sorted(test_id for test_id, verdicts in seen.items() if len(verdicts) > 1)


def missing(base: Report, heads: Sequence[Report]) -> list[str]:
    """Ids that base ran and no head run reported at all (deleted or renamed tests)."""
    present: set[str] = set()
    for head in heads:
        present.update(head.tests)
    return sorted(test_id for test_id in base.tests if test_id not in present)


DODGED = (Outcome.SKIPPED, Outcome.XFAILED)  # how a test that would fail can avoid failing


def newly_skipped(base: Report, heads: Sequence[Report]) -> list[str]:
    """Ids that passed on base but were skipped or xfailed in some head run.

    Skipping a test is the cheapest way to make a red suite green, so the gate
    flags it even when it happens in only one of several head runs.
    """
    found: set[str] = set()
    for head in heads:
        for test_id, result in head.tests.items():
            was = base.tests.get(test_id)
            if result.outcome in DODGED and was is not None and was.outcome == Outcome.PASSED:
                found.add(test_id)
    return sorted(found)


def uncollected(reports: Iterable[Report]) -> dict[str, str]:
    """Files that failed to collect in any of the runs, with what failed
    (pytest reports such a file as an errored entry whose id is the file)."""
    found: dict[str, str] = {}
    for report in reports:
        for test_id, result in report.tests.items():
            if result.outcome is Outcome.ERROR and result.message.startswith(COLLECTION_FAILURE):
                found.setdefault(test_id, result.message.removeprefix(COLLECTION_FAILURE).lstrip(": ")
                                 or "no reason given")
    return found
