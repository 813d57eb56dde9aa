"""A test that failed in the reruns, confirmed in fresh processes before it
is named flaky. Pure: what the fresh runs reported, read and said.

The reruns repeat head's new and changed tests in one process
(gate/judging/reruns.py). A test that checks process-fresh state (that a module is
not imported yet, a lazy attribute not loaded yet) passes there once and
fails after: it checks what only a new process shows, and is not flaky.
So each test that failed in the reruns (one case per test function:
`representatives`) runs again alone, one fresh process at a time (its own
runner, just that test id), up to PROCESSES:
failing in any, it is flaky. Passing in every one, one more fresh process
runs it STEPS times (the rerun plugin's cases): alone, then by turns again
as it is and again with its own test module loaded afresh (AFRESH: its
module-level names made anew, what the interpreter imported kept). A
deterministic test gives the same answer wherever the state is the same:

- alone it passes, again it fails, afresh it passes: it leans on state its
  own test code keeps between runs (a module-level list it appends to), as
  an order-dependent test does: still named flaky;
- alone it passes, again and afresh it fails: it sees the interpreter's
  state, which only a new process resets: not judged flaky, a note;
- it passes every time: it failed in the reruns only beside other tests
  (what the random-order run is for): not judged flaky, a note;
- any other answer (failing alone, or answers that differ where the state
  is the same) is chance: flaky.

With the three runs and the six reruns, a test failing 30% of the time at
random is named flaky 96 times in 100, as without the confirmation; one
failing 10% of the time 55 times (61 without): a confirmation asks a
rare flake to fail twice. Steps cost less than processes (no runner to
start), hence thirteen of them. A fresh run that leaves nothing to read
for the test (no report, a time limit, the id not run) confirms nothing,
and the reruns' word stands.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from gatetui.gate.judging import reruns
from gatetui.gate.reports import junit

PROCESSES = 3  # fresh processes, each running the test alone once
STEPS = 13  # the last fresh process's cases: alone, then again and afresh by turns
AFRESH = tuple(range(3, STEPS + 1, 2))  # the cases run with the test's module loaded afresh
MAX_TESTS = 5  # test functions confirmed; the failed cases of any more are named flaky unconfirmed
FAILING = (junit.Outcome.FAILED, junit.Outcome.ERROR)


class Cause(Enum):
    """Why a test failed in the reruns, as the fresh processes tell it."""

    FLAKY = "again alone in a fresh process"
    OWN_STATE = (
        "passes in fresh processes, but repeated in one fails on state its own test module keeps "
        "(passes with the module loaded afresh)"
    )
    PROCESS_STATE = "passes in fresh processes, fails when repeated in one: not judged flaky"
    BESIDE_OTHERS = "passes in fresh processes, alone and repeated: failed only beside other tests; not judged flaky"
    CHANCE = "again in a fresh process, where repeated with the same state it answered both ways"
    UNCONFIRMED = "not confirmed in a fresh process"


@dataclass(frozen=True)
class Confirmation:
    test: str  # the test's own id, its parameters kept
    cause: Cause

    @property
    def flaky(self) -> bool:
        """Named flaky: a fresh process failed it by chance or alone, its own
        state did, or nothing fresh said otherwise."""
        return self.cause in (Cause.FLAKY, Cause.CHANCE, Cause.OWN_STATE, Cause.UNCONFIRMED)


def representatives(failed: dict[str, int]) -> dict[str, str]:
    """Function -> the one of its cases the fresh processes run, for the
    first MAX_TESTS functions: a parametrized test whose many cases fail the
    reruns on one process-wide state (a locale a test left active, humanize
    4.11: 57 cases) is asked once, not once per case. The case that failed
    the fewest reruns stands for them: a case failing by chance fails less
    often than a deterministic one, so one hidden among them is the one
    asked, and its answer (flaky) goes to all."""
    chosen: dict[str, str] = {}
    for test in sorted(failed, key=lambda t: (reruns.function_of(t), failed[t], t)):
        function = reruns.function_of(test)
        if function not in chosen and len(chosen) < MAX_TESTS:
            chosen[function] = test
    return chosen


def alone_passed(report: junit.Report | None, test: str) -> bool | None:
    """Whether the test passed in a fresh process that ran it alone; None:
    the process left nothing to read for it."""
    outcomes = _outcomes(report, test)
    return None if not outcomes else not any(o in FAILING for o in outcomes.values())


def confirm(test: str, alone: Sequence[junit.Report | None], repeated: junit.Report | None) -> Confirmation:
    """What the fresh processes say of `test`: `alone`, each running it once
    (stopped at the first that did not pass), then `repeated` (run only when
    every one passed), its cases the STEPS steps."""
    said = [alone_passed(r, test) for r in alone]
    if None in said or not said:
        return Confirmation(test, Cause.UNCONFIRMED)
    if False in said:
        return Confirmation(test, Cause.FLAKY)
    steps = _steps(repeated, test)
    if sorted(steps) != list(range(1, STEPS + 1)):
        return Confirmation(test, Cause.UNCONFIRMED)
    return Confirmation(test, _cause(steps))


def _cause(steps: dict[int, bool]) -> Cause:
    """The cause a deterministic test's steps show, else chance."""
    if not steps[1]:
        return Cause.FLAKY  # alone in a fresh process
    again = {passed for step, passed in steps.items() if step > 1 and step not in AFRESH}
    afresh = {passed for step, passed in steps.items() if step in AFRESH}
    if len(again) != 1 or len(afresh) != 1:
        return Cause.CHANCE
    # (again, afresh); again passing, afresh failing: its module cannot be run twice
    patterns = {
        (False, True): Cause.OWN_STATE,
        (False, False): Cause.PROCESS_STATE,
        (True, True): Cause.BESIDE_OTHERS,
        (True, False): Cause.BESIDE_OTHERS,
    }
    return patterns[again.pop(), afresh.pop()]


def _outcomes(report: junit.Report | None, test: str) -> dict[str, junit.Outcome]:
    """The test's cases in a fresh run's report, by id."""
    if report is None:
        return {}
    return {i: t.outcome for i, t in report.tests.items() if reruns.own_id(i) == test}


def _steps(report: junit.Report | None, test: str) -> dict[int, bool]:
    """Whether each step of the repeated run passed, by its number."""
    steps: dict[int, bool] = {}
    for test_id, outcome in _outcomes(report, test).items():
        step = reruns.step_of(test_id)
        if step:
            steps[step] = steps.get(step, True) and outcome not in FAILING
    return steps


def failed_in_reruns(test: str, count: int, confirmation: Confirmation | None) -> str:
    """`test failed N of 6 reruns`, and what the fresh processes added."""
    said = f"{test} failed {count} of {reruns.RERUNS} reruns"
    if confirmation is None or confirmation.cause is Cause.UNCONFIRMED:
        return said
    if confirmation.cause in (Cause.FLAKY, Cause.CHANCE):
        return f"{said}, and {confirmation.cause.value}"
    return f"{said}; it {confirmation.cause.value}"


def note(test: str, count: int, confirmation: Confirmation) -> str:
    """A test the reruns failed that the fresh processes cleared, said."""
    return f"{test} failed {count} of {reruns.RERUNS} reruns but {confirmation.cause.value}"
