"""The watch stream: many read-only viewers on one supervisor's socket.

`gatetui view` (and each page of `gatetui web`) asks once, on the submit
socket, and then only listens:

    {"op": "watch"}
      -> {"event": "hello", "repo", "base", "pattern", "backend", "cap", "started_at"}
      -> {"event": "run", "run": RUN}            each run the supervisor holds, with the lines
                                                 it keeps of each check ("logs")
      -> {"event": "branches", "branches": [BRANCH], "runs": [RUN], "cap", "backend"}
         then, as it happens, until the viewer goes:
      -> {"event": "run", "run": RUN}            a run's checks, digests, cost or state changed
      -> {"event": "output", "branch", "run_id", "check", "stream", "text"}
      -> {"event": "branches", ...}              "runs": each branch's latest run, and any
                                                 run this viewer was not sent yet
      -> {"event": "failed", "branch", "run_id", "message"}
      -> {"event": "escalated", "branch", "message"}
      -> {"event": "refused", "message"}         the viewer sent a line: never acted on
      -> {"event": "dropped", "message"}         the viewer fell behind: the stream ends

A run from the history reaches a viewer without its logs (the supervisor
reads them from the store only when someone looks); the viewer asks for
them on a connection of its own, once, when its screen shows that run:

    {"op": "logs", "branch", "run_id"}
      -> {"event": "run", "run": RUN}            with its logs, read from the store

(RUN and BRANCH: `wire.run_to_wire`, `wire.branch_to_wire`.) A watch
connection changes nothing: whatever its viewer sends after the first line
is answered `refused` and dropped unread (rerun, cancel, review decisions,
giving submits back stay with the supervisor's own screen).

Who may watch: the supervisor's own user and root, never another uid, even
one that may submit. The socket is open to the agent's user (0666, or 0660
for its group) so that it can ask for verdicts; what a viewer is sent is
everything the supervisor's screen shows: the hidden tests' output (which
names them), head's full output from runs the agent did not see, the
findings a person reviews. An agent that could watch could read its hidden
tests and tune its change to them; the agent hears only what `submit` and
`status` tell it. A room watches through `gatetui web`, run by the
supervisor's user, behind a token.

What a viewer costs the supervisor: one `put_nowait` per event into the
viewer's own bounded queue. Encoding and writing happen in the viewer's
own task, a burst at a time (output in a row for one check is one
`output` line); a viewer that falls `QUEUE` events behind is dropped with a
one-line notice (to it, and to the supervisor's log), and a viewer that
went away is forgotten. The supervisor's loop never waits on a viewer.
No Textual here.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gatetui.errors import BadInput
from gatetui.gate.events import OutputChunk
from gatetui.supervise.events import BranchesChanged, EscalationRaised, RunFailed, RunUpdated, SupervisorEvent
from gatetui.supervise.supervisor import Supervisor
from gatetui.supervise.wire import branch_to_wire, run_to_wire

QUEUE = 4096  # events a viewer may lag behind before it is dropped
NOTICE_WAIT = 5.0  # seconds the dropped notice may take to leave
REQUEST_LIMIT = 64 << 10


@dataclass(frozen=True)
class Refused:
    """The viewer sent something on its watch connection: it is told so, nothing more."""

    message: str = "a watch connection is read-only: nothing it sends is acted on"


class Viewer:
    """One watch connection: its queue, what it was sent, whether it fell behind."""

    def __init__(self, size: int = QUEUE):
        self.queue: asyncio.Queue[SupervisorEvent | Refused] = asyncio.Queue(maxsize=size)
        self.sent: set[str] = set()  # run ids whose state this viewer has
        self.behind = False
        self.pump: asyncio.Task[None] | None = None

    def hear(self, event: SupervisorEvent | Refused) -> None:
        """The supervisor's listener: never blocks, never raises."""
        if self.behind:
            return
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            self.behind = True
            if self.pump is not None:
                self.pump.cancel()


class Viewers:
    """Every viewer watching one supervisor (`SubmitServer` hands them over)."""

    def __init__(self, supervisor: Supervisor, log: Callable[[str], None], size: int = QUEUE):
        self.supervisor, self.log, self.size = supervisor, log, size
        self.writers: dict[asyncio.StreamWriter, asyncio.Task[Any]] = {}  # each viewer watching now

    async def close(self) -> None:
        """End every watch (each viewer reads the end of its stream) and wait until each is done."""
        tasks = list(self.writers.values())
        for writer in list(self.writers):
            writer.transport.abort()
        if tasks:
            await asyncio.wait(tasks, timeout=NOTICE_WAIT)

    async def serve(
        self, request: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter, uid: int
    ) -> None:
        """A viewer's request: the watch, or a stored run's logs."""
        if request.get("op") == "logs":
            writer.write(self.logs(request, uid))
            await writer.drain()
        else:
            await self.watch(reader, writer, uid)

    async def watch(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, uid: int) -> None:
        """Serve one viewer until it goes or falls behind."""
        _may_watch(uid)
        viewer = Viewer(self.size)
        unsubscribe = self.supervisor.subscribe(viewer.hear)
        handler = asyncio.current_task()
        if handler is not None:
            self.writers[writer] = handler
        try:
            for line in self.snapshot(viewer):  # before any await: nothing happens in between
                writer.write(line)
            viewer.pump = asyncio.create_task(self._pump(viewer, writer))
            listen = asyncio.create_task(_refuse(reader, viewer))
            await asyncio.wait((viewer.pump, listen), return_when=asyncio.FIRST_COMPLETED)
            for task in (viewer.pump, listen):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                    await task
            if viewer.behind:
                await self._drop(writer)
        finally:
            unsubscribe()
            self.writers.pop(writer, None)

    def logs(self, request: dict[str, Any], uid: int) -> bytes:
        """One stored run with its logs, for a viewer showing it (read on
        the loop, as the supervisor's own screen reads them)."""
        _may_watch(uid)
        run = self.supervisor.run(str(request.get("branch", "")), str(request.get("run_id", "")))
        if run is None:
            raise BadInput(f"no run {request.get('run_id', '')!s:.40} on {request.get('branch', '')!s:.80}")
        self.supervisor.load_logs(run)
        return _line({"event": "run", "run": run_to_wire(run, logs=True)})

    def snapshot(self, viewer: Viewer) -> list[bytes]:
        sup = self.supervisor
        hello = {
            "event": "hello",
            "repo": str(sup.repo),
            "base": sup.base,
            "pattern": sup.pattern,
            "backend": sup.backend.name,
            "cap": sup.submit_cap,
            "started_at": sup.started_at,
        }
        runs = [run for branch in sup.branches.values() for run in branch.runs]
        viewer.sent.update(run.run_id for run in runs)
        return [
            _line(hello),
            *(_line({"event": "run", "run": run_to_wire(run, logs=True)}) for run in runs),
            self._branches(viewer),
        ]

    async def _pump(self, viewer: Viewer, writer: asyncio.StreamWriter) -> None:
        """Whatever waited in the queue leaves in one write, `coalesce`d:
        a check streaming thousands of chunks a second costs the supervisor
        (and the viewer, which reads and draws each line) a line per burst,
        not one per chunk."""
        await writer.drain()
        while True:
            waiting = [await viewer.queue.get()]
            while not viewer.queue.empty():
                waiting.append(viewer.queue.get_nowait())
            writer.write(b"".join(self.encode(event, viewer) for event in coalesce(waiting)))
            await writer.drain()

    def encode(self, event: SupervisorEvent | Refused, viewer: Viewer) -> bytes:
        """One event as the viewer is told it; the state it names read now (the newest)."""
        match event:
            case RunUpdated(event=OutputChunk() as chunk):
                return _line(
                    {
                        "event": "output",
                        "branch": event.branch,
                        "run_id": event.run_id,
                        "check": chunk.check.value,
                        "stream": chunk.stream,
                        "text": chunk.text,
                    }
                )
            case RunUpdated():
                run = self.supervisor.run(event.branch, event.run_id)
                return b"" if run is None else _line({"event": "run", "run": run_to_wire(run)})
            case BranchesChanged():
                return self._branches(viewer)
            case RunFailed():
                return _line(
                    {"event": "failed", "branch": event.branch, "run_id": event.run_id, "message": event.message}
                )
            case EscalationRaised():
                return _line({"event": "escalated", "branch": event.branch, "message": event.message})
            case Refused():
                return _line({"event": "refused", "message": event.message})

    def _branches(self, viewer: Viewer) -> bytes:
        sup = self.supervisor
        branches = list(sup.branches.values())
        runs = [run for b in branches for run in b.runs if run is b.latest or run.run_id not in viewer.sent]
        viewer.sent.update(run.run_id for run in runs)
        return _line(
            {
                "event": "branches",
                "branches": [branch_to_wire(b, sup.submits_used(b.name)) for b in branches],
                "runs": [run_to_wire(run) for run in runs],
                "cap": sup.submit_cap,
                "backend": sup.backend.name,
            }
        )

    async def _drop(self, writer: asyncio.StreamWriter) -> None:
        message = f"this viewer fell {self.size} events behind the supervisor and was dropped: open it again"
        self.log(f"a viewer fell {self.size} events behind: dropped")
        with contextlib.suppress(ConnectionError, TimeoutError):
            writer.write(_line({"event": "dropped", "message": message}))
            await asyncio.wait_for(writer.drain(), NOTICE_WAIT)
        writer.transport.abort()


def _may_watch(uid: int) -> None:
    if uid not in (0, os.geteuid()):
        raise BadInput(
            "only the supervisor's own user may watch: what a viewer sees includes the hidden tests' "
            "output and the logs a person reviews"
        )


def coalesce(events: list[SupervisorEvent | Refused]) -> list[SupervisorEvent | Refused]:
    """Events in a row that the viewer would be told as one: output of the
    same check and stream as one chunk (its text joined), and the same run's
    or the branches' news once (each is sent as the state read when it is
    encoded, the newest, so the repeats said the same)."""
    merged: list[SupervisorEvent | Refused] = []
    for _, group in itertools.groupby(events, key=_same_news):
        run = list(group)
        first = run[0]
        if isinstance(first, RunUpdated) and isinstance(first.event, OutputChunk):
            texts = "".join(e.event.text for e in run if isinstance(e, RunUpdated) and isinstance(e.event, OutputChunk))
            merged.append(RunUpdated(first.branch, first.run_id, dataclasses.replace(first.event, text=texts)))
        else:
            merged.append(run[-1])
    return merged


def _same_news(event: SupervisorEvent | Refused) -> object:
    """What makes events in a row one: output of one check and stream, one
    run's state, the branches; anything else stands alone."""
    match event:
        case RunUpdated(event=OutputChunk() as chunk):
            return ("output", event.branch, event.run_id, chunk.check, chunk.stream)
        case RunUpdated():
            return ("run", event.branch, event.run_id)
        case BranchesChanged():
            return "branches"
    return id(event)


async def _refuse(reader: asyncio.StreamReader, viewer: Viewer) -> None:
    """Until the viewer goes (EOF): whatever it sends is refused, never parsed as a request."""
    while await reader.read(REQUEST_LIMIT):
        viewer.hear(Refused())


def _line(data: dict[str, Any]) -> bytes:
    return json.dumps(data).encode() + b"\n"
