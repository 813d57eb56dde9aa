"""Fold check results into the verdict, by what each check declares."""

from __future__ import annotations

from collections.abc import Iterable

from gatetui.gate.checks.registry import spec_of
from gatetui.gate.checks.spec import SEVERITY
from gatetui.gate.checks.vocabulary import CheckResult, Verdict


def decide(results: Iterable[CheckResult], old_tests_fail_is_fatal: bool = False) -> Verdict:
    """The weightiest thing any result asks for.

    A failure of a check whose failures count as failures fails the change.
    Then a gate error wins over `review`: a person should not review a run
    the gate could not finish. A failure of a check whose failures go to a
    person (old_tests) asks for review, unless policy says fail
    (`old_tests_fail_is_fatal`, named for the one check declared so); so
    does a check that found something to review.
    """
    weights = (spec_of(r.id).weigh(r.status, old_tests_fail_is_fatal) for r in results)
    return max(weights, key=SEVERITY.index, default=Verdict.PASS)
