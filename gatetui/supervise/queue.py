"""The run queue: which runs are under way, and starting and stopping them.

How a run is started is the consumer's choice through a `Launcher`, which
must return something with `cancel()`: plain asyncio tasks by default,
Textual workers in the TUI (one exclusive group per key). At most
`parallel` runs gate at once; the others wait for a slot, queued. A branch
has at most one run in progress: gating it again cancels the one under way
(the runner removes its workspace).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, Protocol

from gatetui.supervise.events import RunUpdated
from gatetui.supervise.run_states import RunState
from gatetui.supervise.runs import Run
from gatetui.supervise.scope import Scope


class Cancellable(Protocol):
    def cancel(self) -> Any: ...


Launcher = Callable[[str, Coroutine[Any, Any, None]], Cancellable]
# one run, from waiting for its slot to its record: gating.GateJob
Job = Callable[[Run, Path | None, asyncio.Semaphore], Awaitable[None]]


def task_launcher(key: str, coro: Coroutine[Any, Any, None]) -> Cancellable:
    return asyncio.get_running_loop().create_task(coro, name=key)


class RunQueue:
    def __init__(self, scope: Scope, job: Job, parallel: int = 2):
        self.scope, self.job = scope, job
        self.launch: Launcher = task_launcher  # the consumer's, from `Supervisor.start`
        self._slots = asyncio.Semaphore(parallel)
        self._handles: dict[str, Cancellable] = {}  # run_id -> its task or worker
        self._active: set[str] = set()  # run ids whose coroutine has not ended

    def gate(self, name: str, source: Path | None = None) -> Run | None:
        """Gate the branch's head now, cancelling its run in progress.
        `source`: the repo holding head when it is not the supervised one."""
        branch = self.scope.branches.get(name)
        if branch is None or branch.at_base:
            return None
        self.cancel(name)
        run = Run(
            uuid.uuid4().hex[:12], name, branch.head, started_at=self.scope.clock(), backend=self.scope.backend.name
        )
        branch.runs.append(run)
        self._handles[run.run_id] = self.launch(f"gate {name}", self._run(run, source))
        self.scope.branches_changed()
        return run

    def cancel(self, name: str) -> bool:
        """Cancel the branch's run in progress; True when there was one."""
        branch = self.scope.branches.get(name)
        run = branch.latest if branch else None
        if run is None or not run.in_progress:
            return False
        run.move_to(RunState.CANCELLED)
        handle = self._handles.pop(run.run_id, None)
        if handle is not None:
            handle.cancel()
        self.scope.emit(RunUpdated(name, run.run_id))
        self.scope.branches_changed()
        return True

    async def stop(self, wait: float) -> None:
        """Cancel every run in progress and wait (at most `wait` seconds)
        until their coroutines end, their workspaces cleaned up."""
        for name in list(self.scope.branches):
            self.cancel(name)
        deadline = time.monotonic() + wait
        while self._active and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    async def finished(self, run: Run) -> Run:
        """Wait until `run` ends: a verdict, an error, or cancelled."""
        done = asyncio.Event()
        unsubscribe = self.scope.listeners.subscribe(lambda _: done.set() if not run.in_progress else None)
        try:
            while run.in_progress:
                done.clear()
                await done.wait()
        finally:
            unsubscribe()
        return run

    async def _run(self, run: Run, source: Path | None) -> None:
        """The job, counted as under way until it ends however it ends."""
        self._active.add(run.run_id)
        try:
            await self.job(run, source, self._slots)
        finally:
            if self._handles.get(run.run_id) is not None and not run.in_progress:
                self._handles.pop(run.run_id, None)
            self._active.discard(run.run_id)
            self.scope.emit(RunUpdated(run.branch, run.run_id))
            self.scope.branches_changed()
