"""The main screen's words: the run's heading and the empty screen's advice
(plain functions of the supervisor's records, testable without a screen)."""

from __future__ import annotations

from gatetui.supervise.runs import Branch, Run
from gatetui.supervise.view import SupervisorView
from gatetui.tui.format import VERDICT_WORD, seconds, short


def run_title(supervisor: SupervisorView, branch: Branch | None, run: Run | None, pinned: bool) -> str:
    """The run pane's heading: branch, head, verdict, and what a person should know."""
    if branch is None:
        return ""
    escalated = (
        "\nESCALATED: the agent used its submits; review its runs, then g gives its submits back"
        if branch.escalated
        else ""
    )
    if run is None:
        why = "its head is part of base: waiting for the agent's commit" if branch.at_base else "no run yet"
        return f"{branch.name} at {short(branch.head)}: {why}{escalated}"
    word = VERDICT_WORD.get(run.status, run.status)
    stale = "  (stale: not the branch tip)" if run.head != branch.head and not run.in_progress else ""
    if pinned:
        stale += "  (an older run: enter on the newest follows it again)"
    took = f" in {seconds(run.seconds)}" if run.seconds is not None else ""
    review = f", review {run.review}" if run.review else ""
    notes = "".join(f"\nnote: {n}" for n in run.notes[:1])
    message = f"\n{run.message}" if run.message else ""
    return (
        f"{branch.name} at {short(run.head)}: {word}{took}{review}, "
        f"{run.backend or supervisor.backend.name} backend{stale}{escalated}{message}{notes}"
    )


def empty_text(s: SupervisorView) -> str:
    """What a new user sees before any branch matches: what to do next."""
    return (
        f"No branch matches {s.pattern} in {s.repo.name} yet.\n\n"
        f"Have your agent work on a branch named like {s.pattern.replace('*', 'fix-dates')}\n"
        f"  (git switch -c {s.pattern.replace('*', 'fix-dates')} {s.base})\n"
        "and commit: every new commit on it is gated here, live.\n\n"
        "? help   q quit"
    )
