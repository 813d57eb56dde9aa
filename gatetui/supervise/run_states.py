"""A run's states and every move between them, in one table.

A run is queued, then running, then ends with a verdict (pass, fail,
review, error) or is cancelled. The values are what records store as
`verdict` and what the screen and the submit server show, so the enum is a
`StrEnum`: a state is also its own text.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from gatetui.errors import IllegalTransition
from gatetui.gate.checks import Verdict


class RunState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    PASS = "pass"
    FAIL = "fail"
    REVIEW = "review"
    ERROR = "error"
    CANCELLED = "cancelled"

    @classmethod
    def of_verdict(cls, verdict: Verdict) -> RunState:
        return cls(verdict.value)

    @classmethod
    def of_record(cls, value: object) -> RunState:
        """A stored record's `verdict`: one this version does not know
        reads as an error, never as a verdict it did not give."""
        try:
            return cls(str(value))
        except ValueError:
            return cls.ERROR

    @property
    def in_progress(self) -> bool:
        return self in (RunState.QUEUED, RunState.RUNNING)

    @property
    def judged(self) -> bool:
        """Ended, and not by a cancel: what the branch shows as its verdict."""
        return not self.in_progress and self is not RunState.CANCELLED

    @property
    def answers_for_head(self) -> bool:
        """Under way or with a verdict that is not an error: a head whose
        latest run is in this state is not gated again (by a move or a submit)."""
        return self not in (RunState.CANCELLED, RunState.ERROR)

    @property
    def stopped(self) -> bool:
        """An error or a cancel: when it left no verdict recorded, the run is kept as a stopped one."""
        return self in (RunState.ERROR, RunState.CANCELLED)

    def to(self, state: RunState) -> RunState:
        """`state`, when the table allows the move; IllegalTransition otherwise."""
        if state not in TRANSITIONS[self]:
            raise IllegalTransition(f"a run cannot move from {self} to {state}")
        return state


_VERDICTS = frozenset({RunState.PASS, RunState.FAIL, RunState.REVIEW, RunState.ERROR})

TRANSITIONS: Mapping[RunState, frozenset[RunState]] = {
    # a slot frees (or the runner says it started); a cancel, or the gate failing before it started
    RunState.QUEUED: frozenset({RunState.RUNNING, RunState.CANCELLED, RunState.ERROR}),
    # the runner's own start comes after the slot's; then its verdict, a failure or a cancel
    RunState.RUNNING: frozenset({RunState.RUNNING, RunState.CANCELLED} | _VERDICTS),
    # after the verdict the run's coroutine may still fail (its runner's clean-up) or be cancelled
    # (a newer head's run replaces the worker) before it ends
    RunState.PASS: frozenset({RunState.ERROR, RunState.CANCELLED}),
    RunState.FAIL: frozenset({RunState.ERROR, RunState.CANCELLED}),
    RunState.REVIEW: frozenset({RunState.ERROR, RunState.CANCELLED}),
    # an error ends like a verdict (it may be one: the runner's); a stopped run is said to stop
    # again as its record is kept
    RunState.ERROR: frozenset({RunState.ERROR, RunState.CANCELLED}),
    RunState.CANCELLED: frozenset({RunState.CANCELLED}),
}
