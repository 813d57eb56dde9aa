"""The runs out of source order: which seed, which run, and what a test
failing only there is.

With `random_order = true` run 1 goes in the order the stack declares
(`Suite.reorder`: pytest and node's runner reverse the tests, go test
runs each test alone; stacks/order.py) and run 3 is shuffled the way the
profile's runner shuffles (`Suite.shuffle`: pytest loads a small plugin
the gate writes into the copy, go test takes `-shuffle`). The seed is drawn
when the plan is made, so the digest state names it before any test runs,
and the same order can be replayed by passing the seed again
(GateRequest.random_seed).

A test that fails only in those runs and passes in every run in source
order is order-dependent, not flaky by chance: the detail says so, with
the test declared just before it (in the same file), the one it most
likely needs to run first.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from gatetui.gate.reports import junit

RUN_INDEX = 2  # run 3 of 3 is shuffled; run 2 (measured) keeps the suite's own order
FAILING = (junit.Outcome.FAILED, junit.Outcome.ERROR)


def draw_seed() -> int:
    return secrets.randbelow(2**31)


def order_dependent(
    in_order: Sequence[junit.Report], reordered: Sequence[junit.Report], flaky: Sequence[str]
) -> dict[str, str | None]:
    """Of the `flaky` tests (in source order), those that passed in every run in source order
    and failed in a reordered one, each with the test before it in source
    order (None: the first of its file, or no source-order run to tell)."""
    if not in_order or not reordered:
        return {}
    found: dict[str, str | None] = {}
    first = set(flaky) & set(in_order[0].tests)
    for test in [t for t in in_order[0].tests if t in first] + [t for t in flaky if t not in first]:
        kept = [r.tests[test].outcome for r in in_order if test in r.tests]
        broke = any(test in r.tests and r.tests[test].outcome in FAILING for r in reordered)
        if broke and kept and all(o is junit.Outcome.PASSED for o in kept):
            found[test] = _before(in_order[0], test)
    return found


def _before(report: junit.Report, test: str) -> str | None:
    """The test just before `test` in a source-order run, if in its file."""
    ids = list(report.tests)
    place = ids.index(test) if test in ids else 0
    if place == 0:
        return None
    before = ids[place - 1]
    return before if before.split("::", 1)[0] == test.split("::", 1)[0] else None
