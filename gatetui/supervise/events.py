"""What the supervisor's consumers are told, and the fan-out that tells them.

Events say what changed; the state to show is read back from the
supervisor's branches and runs (`runs.Branch`, `runs.Run`). The TUI turns
them into Textual messages, the submit server waits on them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from gatetui.gate.events import GateEvent


@dataclass(frozen=True)
class BranchesChanged:
    """A branch appeared, went, moved, or its latest verdict changed."""


@dataclass(frozen=True)
class RunUpdated:
    """One gate event folded into a run (`event` None: the run's status changed)."""

    branch: str
    run_id: str
    event: GateEvent | None = None


@dataclass(frozen=True)
class RunFailed:
    """The gate could not run at all; `message` says what to do."""

    branch: str
    run_id: str
    message: str


@dataclass(frozen=True)
class EscalationRaised:
    """A branch used up its submits: a person is asked to take over."""

    branch: str
    message: str


SupervisorEvent = BranchesChanged | RunUpdated | RunFailed | EscalationRaised
Listener = Callable[[SupervisorEvent], None]


class Listeners:
    """Everyone who hears the supervisor: callbacks, or async iterators
    (each its own queue, so a slow reader never holds up the others)."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with every SupervisorEvent; returns the unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def events(self) -> AsyncIterator[SupervisorEvent]:
        queue: asyncio.Queue[SupervisorEvent] = asyncio.Queue()
        unsubscribe = self.subscribe(queue.put_nowait)
        try:
            while True:
                yield await queue.get()
        finally:
            unsubscribe()

    def emit(self, event: SupervisorEvent) -> None:
        for listener in list(self._listeners):
            listener(event)
