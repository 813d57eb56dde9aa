"""How runs compare, test by test.

Apart from junit.py because nothing here reads XML: junit.py turns a hostile
document into a `Report` (the records live in stacks/results.py, where a
stack that reads its own format makes them too), while the judge, the
baseline and the hidden tests work on reports whatever made them.  junit.py
re-exports these names, so callers import them from there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from gatetui.stacks.results import COLLECTION_FAILURE, SEVERITY, VERDICT, Outcome, Report, TestResult

__all__ = [
    "COLLECTION_FAILURE",
    "DODGED",
    "SEVERITY",
    "Gone",
    "Outcome",
    "Report",
    "TestResult",
    "flaky",
    "gone",
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


@dataclass(frozen=True)
class Gone:
    """Base tests of one family (a test and its cases) that head's runs lack.

    Which of a family's ids are gone is certain only when head ran none of
    its cases under ids base does not know: a parametrized case's id follows
    its values and its index, so an honest edit of the parameters (a value
    changed, a case inserted before it) renames cases. `count` is how many
    fewer cases head ran than base; `absent` holds base's ids that no head
    run reported, at least `count` of them, and every one when they are
    all gone."""

    family: str
    count: int
    absent: tuple[str, ...]

    @property
    def whole(self) -> bool:
        """Every absent id is gone: no case of the family ran under a new id."""
        return self.count == len(self.absent)


def gone(base: Report, heads: Sequence[Report], family: Callable[[str], str]) -> list[Gone]:
    """Per family of `missing` ids, the cases head's runs lack, by count.

    A family whose cases head runs as many of (or more) as base is not
    short, whatever its ids: removing a case still leaves it short by one,
    and a case whose values changed fails under base's tests (`old_tests`).
    Unparametrized tests are families of one, so a removed one is gone."""
    absent = missing(base, heads)
    families = {family(i) for i in absent}
    present = {i for head in heads for i in head.tests}
    at_base = Counter(f for i in base.tests if (f := family(i)) in families)
    at_head = Counter(f for i in present if (f := family(i)) in families)
    out: list[Gone] = []
    for name in sorted(families):
        if (short := at_base[name] - at_head[name]) > 0:
            out.append(Gone(name, short, tuple(i for i in absent if family(i) == name)))
    return out


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
                found.setdefault(
                    test_id, result.message.removeprefix(COLLECTION_FAILURE).lstrip(": ") or "no reason given"
                )
    return found
