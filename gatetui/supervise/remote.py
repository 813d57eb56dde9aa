"""A viewer's copy of a supervisor, fed by its watch stream (broadcast.py).

`RemoteSupervisor` answers what a screen reads (`view.SupervisorView`)
from the runs and branches the stream carried, and tells its listeners
the same `SupervisorEvent`s the supervisor tells its own screen: the
viewer's screens are the supervisor's screens. It has nothing that
changes state, and sends nothing after its one `watch` request. The logs
it shows are those the stream carried: the lines the supervisor held when
the viewer connected, then every line as it came (a run read back from the
store before the viewer connected shows its logs once the supervisor's own
screen has loaded them). No Textual here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gatetui.errors import BackendError, BadInput
from gatetui.gate.checks import CheckId
from gatetui.gate.cost import Usage
from gatetui.gate.events import OutputChunk
from gatetui.supervise.events import (
    BranchesChanged,
    EscalationRaised,
    Listener,
    Listeners,
    RunFailed,
    RunUpdated,
    SupervisorEvent,
)
from gatetui.supervise.runs import Branch, Run, cost_since
from gatetui.supervise.wire import branch_from_wire, run_from_wire

LINE_LIMIT = 64 << 20  # the longest line read: a run with every check's kept lines


@dataclass
class BackendName:
    name: str = ""


@dataclass(frozen=True)
class Ended:
    """Why a watch ended: `dropped` (the viewer fell behind: watch again), or the supervisor went."""

    dropped: bool
    message: str


class RemoteSupervisor:
    """What a viewer knows of the supervisor at `socket`."""

    def __init__(self, socket: Path):
        self.socket = socket
        self.repo, self.base, self.pattern = Path("."), "", ""
        self.backend = BackendName()
        self.submit_cap, self.started_at = 0, 0.0
        self.branches: dict[str, Branch] = {}
        self.runs: dict[str, Run] = {}
        self.used: dict[str, int] = {}
        self.listeners = Listeners()
        self.asked: set[str] = set()  # runs whose stored logs were asked for
        self.fetching: set[asyncio.Task[None]] = set()

    # --- what a screen reads ----------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        return self.listeners.subscribe(listener)

    def run(self, name: str, run_id: str | None = None) -> Run | None:
        branch = self.branches.get(name)
        if branch is None:
            return None
        return branch.latest if run_id is None else branch.find(run_id)

    def load_logs(self, run: Run) -> None:
        """A run from the history arrives without its logs: asked for once,
        on a connection of its own, without waiting (the screen calls this
        as it draws); the listeners hear the run when they come."""
        if run.logs or run.in_progress or run.run_id in self.asked:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop to fetch on: nothing shown is waiting for them
        self.asked.add(run.run_id)
        task = loop.create_task(self._fetch_logs(run.branch, run.run_id))
        self.fetching.add(task)
        task.add_done_callback(self.fetching.discard)

    async def _fetch_logs(self, branch: str, run_id: str) -> None:
        """The stored run with its logs; a supervisor gone or refusing
        leaves the run as it was (the stream says why it ended)."""
        with contextlib.suppress(OSError, ValueError, KeyError):
            reader, writer = await asyncio.open_unix_connection(str(self.socket), limit=LINE_LIMIT)
            try:
                writer.write(json.dumps({"op": "logs", "branch": branch, "run_id": run_id}).encode() + b"\n")
                await writer.drain()
                message = json.loads(await reader.readline())
            finally:
                writer.close()
            if message.get("event") == "run":
                run = self._keep(message["run"])
                self.listeners.emit(RunUpdated(run.branch, run.run_id))

    def submits_used(self, name: str) -> int:
        return self.used.get(name, 0)

    def cost_since_start(self) -> Usage:
        return cost_since(self.branches.values(), self.started_at)

    # --- the stream ------------------------------------------------------------------

    async def follow(self) -> Ended:
        """Watch until the stream ends; BackendError when no supervisor
        answers, BadInput when it refuses this user."""
        try:
            reader, writer = await asyncio.open_unix_connection(str(self.socket), limit=LINE_LIMIT)
        except OSError as err:
            raise BackendError(
                f"no supervisor answers on {self.socket} ({err.strerror}): start `gatetui serve REPO` "
                "or the TUI on the repository, or pass its --socket"
            ) from None
        try:
            writer.write(json.dumps({"op": "watch"}).encode() + b"\n")
            await writer.drain()
            while line := await reader.readline():
                ended = self.apply(json.loads(line))
                if ended is not None:
                    return ended
        except (ConnectionError, ValueError):
            pass  # the supervisor went mid-line
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
        return Ended(False, "the supervisor stopped: what is shown is as it last was")

    def apply(self, message: dict[str, Any]) -> Ended | None:
        """Fold one line of the stream in and tell the listeners; an Ended
        when the stream says it is over."""
        kind = message.get("event")
        if kind == "error":
            raise BadInput(str(message.get("message", "the supervisor refused to be watched")))
        if kind == "dropped":
            return Ended(True, str(message.get("message", "")))
        event = self._fold(kind, message)
        if event is not None:
            self.listeners.emit(event)
        return None

    def _fold(self, kind: object, message: dict[str, Any]) -> SupervisorEvent | None:
        match kind:
            case "hello":
                self.repo, self.base, self.pattern = Path(message["repo"]), message["base"], message["pattern"]
                self.backend.name, self.submit_cap = message["backend"], message["cap"]
                self.started_at = float(message["started_at"])
                return BranchesChanged()
            case "run":
                run = self._keep(message["run"])
                return RunUpdated(run.branch, run.run_id)
            case "output":
                chunk = OutputChunk(CheckId(message["check"]), message["stream"], message["text"])
                held = self.runs.get(message["run_id"])
                if held is not None:
                    held.log(chunk.check).append(chunk.stream, chunk.text)
                return RunUpdated(message["branch"], message["run_id"], chunk)
            case "branches":
                self._branches(message)
                return BranchesChanged()
            case "failed":
                return RunFailed(message["branch"], message["run_id"], message["message"])
            case "escalated":
                return EscalationRaised(message["branch"], message["message"])
        return None  # "refused", or what a newer supervisor says that this viewer does not know

    def _keep(self, data: dict[str, Any]) -> Run:
        """A run's newest state, keeping the log lines this viewer holds."""
        run = run_from_wire(data)
        known = self.runs.get(run.run_id)
        if known is not None and "logs" not in data:
            run.logs = known.logs
        self.runs[run.run_id] = run
        branch = self.branches.get(run.branch)
        if branch is not None:
            branch.runs = [run if r.run_id == run.run_id else r for r in branch.runs]
        return run

    def _branches(self, message: dict[str, Any]) -> None:
        for data in message["runs"]:
            self._keep(data)
        self.submit_cap, self.backend.name = message["cap"], message["backend"]
        branches = [branch_from_wire(b, self.runs) for b in message["branches"]]
        self.branches = {b.name: b for b in branches}
        self.used = {b["name"]: int(b["submits_used"]) for b in message["branches"]}
        live = {run.run_id for b in branches for run in b.runs}
        self.runs = {k: v for k, v in self.runs.items() if k in live}
