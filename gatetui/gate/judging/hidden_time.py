"""How long the hidden run may take: a bound drawn from head's own runs.

Library code can read the hidden test files the run writes into its tree
and sleep when they hold some value. The agent then learns something about a
hidden test from how long its submit took. The channel cannot be closed (the
verdict comes when the gate ends), but it can be narrowed: the hidden run
starts beside head's visible runs and is stopped once it has taken more than
FACTOR times the slowest of them, plus SLACK for a process's start on a busy
machine. A run stopped there, or one that ended past the bound, fails the
hidden check with the same words as any other hidden failure, so the detail
says no more than the wall clock already does; the reason goes to the hidden
stream, which only a person sees.

Hidden tests are a few cases per special-cased input, not a second suite,
so an honest hidden run ends well inside three times head's whole suite.
"""

from __future__ import annotations

from collections.abc import Sequence

from gatetui.backends.base import CommandResult

FACTOR = 3.0  # the hidden run against head's slowest visible run
SLACK = 10.0  # seconds: a runner's start and a loaded machine's jitter

NOT_PASSED = "the hidden tests did not pass"  # the detail of a stopped or overlong run: nothing more


def bound(visible: Sequence[CommandResult]) -> float:
    """Seconds the hidden run may take, given head's runs (and base's tests on head)."""
    slowest = max((result.wall_seconds for result in visible), default=0.0)
    return FACTOR * slowest + SLACK


def over(result: CommandResult, limit: float) -> bool:
    """Whether the hidden run went past `limit` (stopped there, or ended after it)."""
    return result.wall_seconds > limit


def why(result: CommandResult, limit: float, visible: Sequence[CommandResult]) -> str:
    """For the hidden stream (a person's eyes only): what the bound was and what the run took."""
    slowest = max((r.wall_seconds for r in visible), default=0.0)
    return (
        f"\nthe hidden run was stopped or judged at its bound: {result.wall_seconds:.1f} s, over "
        f"{FACTOR:g} x head's slowest run ({slowest:.1f} s) + {SLACK:g} s = {limit:.1f} s\n"
    )
