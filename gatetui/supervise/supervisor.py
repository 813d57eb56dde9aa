"""The supervisor: watches a repo's agent branches and gates every new head.

It is what the TUI and `gatetui serve` drive: it knows the repo, the base
ref, the branch pattern and the backend; it keeps, per branch, the head,
its runs (history from the store, then live ones) and whether the latest
verdict is stale. Each job is a part of its own (see the package's
docstring); this class puts them together behind the one API its
consumers call. No Textual here.

    supervisor = Supervisor(repo, backend, store)
    unsubscribe = supervisor.subscribe(print)   # or: async for e in supervisor.events()
    await supervisor.start()                    # history, gates missed heads, watches
    ...
    await supervisor.stop()

Consumers get `SupervisorEvent`s; they say what changed, and the state to
show is read back from `branches` / `Branch` / `Run` (supervise.runs).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from gatetui.backends.base import Backend
from gatetui.gate.cost import Usage
from gatetui.supervise.branch_watch import BranchWatch
from gatetui.supervise.events import Listener, SupervisorEvent
from gatetui.supervise.gating import GateJob
from gatetui.supervise.queue import Launcher, RunQueue, task_launcher
from gatetui.supervise.ref_watcher import Moves, RefWatcher
from gatetui.supervise.reviews import Reviews
from gatetui.supervise.runs import ReviewFile, Run, cost_since
from gatetui.supervise.scope import Scope
from gatetui.supervise.store import Store
from gatetui.supervise.submits import Submits


class Supervisor(Scope):
    """Gates every new head of the branches matching `pattern` in `repo`.

    It is the scope its jobs share (they are handed the supervisor itself):
    a backend switched with `b`, a clock a test sets, a pattern changed
    before start reach them all at once."""

    def __init__(
        self,
        repo: Path,
        backend: Backend,
        store: Store,
        *,
        base: str = "main",
        pattern: str = "agent/*",
        submit_cap: int | None = None,
        timeout: float | None = None,
        parallel: int = 2,
        clock: Callable[[], float] = time.time,
        watcher: RefWatcher | None = None,
    ):
        repo = Path(repo).resolve()
        super().__init__(
            repo,
            store,
            backend,
            watcher or RefWatcher(repo, pattern),
            base,
            pattern,
            timeout,
            clock,
            started_at=clock(),
        )
        self.parallel = parallel  # runs gated at once; the others wait queued
        self.reviews = Reviews(self)
        self.queue = RunQueue(self, GateJob(self, self.reviews.keep_stopped), parallel)
        self.submits = Submits(self, self.gate, submit_cap)
        self.watching = BranchWatch(self, self.gate, self.cancel)

    # --- listening and lifecycle ---------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with every SupervisorEvent; returns the unsubscribe."""
        return self.listeners.subscribe(listener)

    def events(self) -> AsyncIterator[SupervisorEvent]:
        return self.listeners.events()

    def check(self) -> str:
        """Raise BadInput when the repo or base cannot be read; base's sha."""
        return self.base_sha()

    async def start(self, launch: Launcher | None = None) -> None:
        """Load the history, gate heads that have no run yet, then watch."""
        self.queue.launch = launch or task_launcher
        await asyncio.to_thread(self.read_cap)
        await self.watching.start(self.queue.launch)

    async def stop(self, wait: float = 15.0) -> None:
        """Stop watching, cancel every run in progress and wait (at most
        `wait` seconds) until their workspaces are cleaned up."""
        self.watching.stop()
        await self.queue.stop(wait)

    async def apply_moves(self, moves: Moves) -> None:
        await self.watching.apply_moves(moves)

    # --- runs ------------------------------------------------------------------

    def gate(self, name: str) -> Run | None:
        """Gate the branch's head now (from the mirror when it was submitted), cancelling its run in progress."""
        branch = self.branches.get(name)
        return self.queue.gate(name, self.submits.source_of(branch.head) if branch else None)

    def cancel(self, name: str) -> bool:
        return self.queue.cancel(name)

    async def finished(self, run: Run) -> Run:
        return await self.queue.finished(run)

    def set_backend(self, backend: Backend) -> None:
        """Runs started from now on use `backend`."""
        self.backend = backend

    def run(self, name: str, run_id: str | None = None) -> Run | None:
        branch = self.branches.get(name)
        if branch is None:
            return None
        return branch.latest if run_id is None else branch.find(run_id)

    def cost_since_start(self) -> Usage:
        return cost_since(self.branches.values(), self.started_at)

    # --- reviews -----------------------------------------------------------------

    def review(self, run: Run, decision: str, by: str = "") -> None:
        self.reviews.decide(run, decision, by)

    def review_files(self, run: Run) -> list[ReviewFile]:
        return self.reviews.files(run)

    def load_logs(self, run: Run) -> None:
        self.reviews.load_logs(run)

    # --- submits, the cap, escalation ---------------------------------------------

    @property
    def submit_cap(self) -> int:
        return self.submits.cap.value

    def read_cap(self) -> int:
        return self.submits.cap.read()

    async def gate_commit(self, name: str, sha: str, source: Path, as_uid: int | None = None) -> Run:
        return await self.submits.gate_commit(name, sha, source, as_uid)

    def submits_used(self, name: str) -> int:
        return self.submits.used(name)

    async def count_submit(self, name: str) -> int:
        return await self.submits.count(name)

    def escalate(self, name: str, head: str, message: str) -> None:
        self.submits.escalate(name, head, message)

    def give_back_submits(self, name: str) -> None:
        self.submits.give_back(name)
