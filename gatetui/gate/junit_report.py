"""How runs compare, test by test.

Apart from junit.py because nothing here reads XML: junit.py turns a hostile
document into a `Report` (the records live in stacks/results.py, where a
stack that reads its own format makes them too), while the judge, the
baseline and the hidden tests work on reports whatever made them.  junit.py
re-exports these names, so callers import them from there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gatetui.stacks.results import COLLECTION_FAILURE, SEVERITY, VERDICT, Outcome, Report, TestResult

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


def flaky(runs: Sequence[Report]) -> list[str]:
    """Ids that passed, failed or skipped differently across the runs they ran in."""
    seen: dict[str, set[str]] = {}
    for run in runs:
        for test_id, result in run.tests.items():
            seen.setdefault(test_id, set()).add(VERDICT[result.outcome])
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
