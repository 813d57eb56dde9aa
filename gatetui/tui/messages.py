"""App-wide messages: the supervisor's events, relayed into Textual.

The state to show lives in the supervisor; a message only says what to
re-read. So a newer message of the same kind (and branch, and check) can
replace one still queued: a burst of output or a run of cost ticks costs
one redraw, not one per event.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message
from textual.message_pump import MessagePump

from gatetui.gate.checks import CheckId
from gatetui.gate.events import OutputChunk
from gatetui.supervise import events


@dataclass
class BranchesChanged(Message):
    """The branch list (heads, statuses) changed."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, BranchesChanged)


@dataclass
class RunChanged(Message):
    """A run's checks, digests, cost or verdict changed."""

    branch: str
    run_id: str

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunChanged) and (message.branch, message.run_id) == (self.branch, self.run_id)


@dataclass
class OutputArrived(Message):
    """New output lines for one check of a run."""

    branch: str
    run_id: str
    check: CheckId

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, OutputArrived) and (
            (message.branch, message.run_id, message.check) == (self.branch, self.run_id, self.check)
        )


@dataclass
class EscalationRaised(Message):
    """A branch used up its submits: a person is asked to take over."""

    branch: str
    message: str


@dataclass
class GateFailed(Message):
    """The gate could not run: shown in a modal, never as a traceback."""

    branch: str
    message: str


def relay(event: events.SupervisorEvent, screen: MessagePump, app: MessagePump) -> None:
    """A supervisor's event as the message that says what to re-read: to
    the main screen, and a failed gate to the app (a modal, or a notice)."""
    match event:
        case events.BranchesChanged():
            screen.post_message(BranchesChanged())
        case events.RunUpdated(event=OutputChunk() as chunk):
            screen.post_message(OutputArrived(event.branch, event.run_id, chunk.check))
        case events.RunUpdated():
            screen.post_message(RunChanged(event.branch, event.run_id))
        case events.RunFailed():
            app.post_message(GateFailed(event.branch, event.message))
        case events.EscalationRaised():
            screen.post_message(EscalationRaised(event.branch, event.message))
