"""Reruns of the tests head adds or changes: flakes three runs miss.

A test that fails one time in three passes 3 of 3 runs about one time in
three. After run 1, in its copy, the tests head added or changed (by their
own lines: gate/diff/changed_tests.py) run RERUNS more times in one process
(the profile's `rerun` plugin; pytest's makes each a case of its own); with
the three runs that is nine. Only those tests run again: the cost is one
short process. A test failing there is confirmed in fresh processes before
it is named flaky (gate/judging/fresh.py): repeated in one process, a test that
checks process-fresh state fails without being flaky.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

from gatetui.gate.reports import junit

RERUNS = 6  # with the three runs: 0.7 ** 9 < 0.05
MAX_TESTS = 200  # node ids on one command line
CASE = re.compile(r"\[gatetui-rerun-\d+\]$|-gatetui-rerun-\d+(?=\]$)")
STEP = re.compile(r"gatetui-rerun-(\d+)\]$")  # which of the cases, from 1
PARAMS = re.compile(r"\[.*\]$", re.DOTALL)


def targets(report: junit.Report, changed: Callable[[str], bool]) -> list[str]:
    """Run 1's tests that head added or changed (`changed` is asked of each
    function-level id), as the node ids pytest takes on its command line."""
    ids = {function_of(i) for i in report.tests if "::" in i}
    return sorted(i for i in ids if changed(i))[:MAX_TESTS]


def function_of(test_id: str) -> str:
    """A test's id without its parameters: its function's (or method's)."""
    return PARAMS.sub("", test_id)


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
            own = own_id(test_id)
            counts[own] = counts.get(own, 0) + 1
    return dict(sorted(counts.items()))


def own_id(test_id: str) -> str:
    """A rerun case's id as the test's own (its parameters kept)."""
    return CASE.sub("", test_id).removesuffix("[]")


def step_of(test_id: str) -> int:
    """Which rerun case an id is (1 for the first), 0 for no rerun case."""
    found = STEP.search(test_id)
    return int(found.group(1)) if found else 0
