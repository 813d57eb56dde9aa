"""Reruns of the tests head adds or changes: flakes three runs miss.

A test that fails one time in three passes 3 of 3 runs about one time in
three. After run 1, in its copy, the tests in the files head added or
changed run RERUNS more times in one process (the profile's `rerun` plugin;
pytest's makes each a case of its own); with the three runs that is nine,
and a test failing 30% of the time is caught 96 times in 100. Only those
tests run again: the cost is one short process.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

from gatetui.gate import junit

RERUNS = 6  # with the three runs: 0.7 ** 9 < 0.05
MAX_TESTS = 200  # node ids on one command line
CASE = re.compile(r"\[gatetui-rerun-\d+\]$|-gatetui-rerun-\d+(?=\]$)")
PARAMS = re.compile(r"\[.*\]$", re.DOTALL)


def targets(report: junit.Report, changed: Callable[[str], bool]) -> list[str]:
    """Run 1's tests in files head added or changed, as the function-level
    node ids pytest takes on its command line."""
    ids = {PARAMS.sub("", i) for i in report.tests if "::" in i and changed(i.split("::", 1)[0])}
    return sorted(ids)[:MAX_TESTS]


def command(test: str, ids: list[str]) -> str:
    """The reruns are judged by their report alone: their output (six
    times a test's, a flood six times over) is not kept, so no backend
    carries it (Runtime's SDK holds a command's whole output in memory)."""
    return f"{test} {' '.join(shlex.quote(i) for i in ids)} >/dev/null 2>&1"


def failures(report: junit.Report) -> dict[str, int]:
    """How many reruns of each test failed, by the test's own id."""
    counts: dict[str, int] = {}
    for test_id, result in report.tests.items():
        if result.outcome in (junit.Outcome.FAILED, junit.Outcome.ERROR):
            own = CASE.sub("", test_id).removesuffix("[]")
            counts[own] = counts.get(own, 0) + 1
    return dict(sorted(counts.items()))

