"""Exit codes and the errors that map to them.

Scripts and CI rely on these numbers (DESIGN.md's CLI contract). Every error
carries one line that names what is wrong and what to do.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    PASS = 0
    FAIL = 1  # fail or review: a person or the agent has work to do
    BAD_INPUT = 2  # not a repo, unknown ref, no tests, bad config
    GATE_ERROR = 3  # the gate itself could not run: backend error, missing tool
    CAP_REACHED = 4  # submit: the cap is reached, a person was asked


class GateError(Exception):
    """An error a user can act on; `str(err)` is the one line to print."""

    exit_code = ExitCode.GATE_ERROR


class BadInput(GateError):
    exit_code = ExitCode.BAD_INPUT


class BackendError(GateError):
    exit_code = ExitCode.GATE_ERROR


class IllegalTransition(RuntimeError):
    """A run asked to move between states no path allows: a bug in the
    supervisor, never the user's doing, so never reported as a GateError."""
