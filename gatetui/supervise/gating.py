"""One run of the gate for the supervisor: from its slot to its record.

A run takes the backend chosen when its slot frees (so `b` reaches runs
still queued), builds its request as every caller does (`gate.api`), folds
each event into the run and the sealed history, and whatever ends it (a
verdict, the gate failing, a cancel, a bug) closes every workspace it
opened. A run that ends without a verdict is kept too (`Reviews.keep_stopped`):
every run is shown after a restart.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from pathlib import Path

from gatetui.backends.closing import ClosingBackend
from gatetui.errors import GateError
from gatetui.gate.api import gate_request
from gatetui.gate.events import GateEvent, RunStarted
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from gatetui.supervise.events import RunFailed
from gatetui.supervise.gate_inputs import gate_inputs
from gatetui.supervise.history import Recorder
from gatetui.supervise.run_states import RunState
from gatetui.supervise.runs import Run
from gatetui.supervise.scope import Scope


class GateJob:
    """Called by the run queue with each run, its source and the slots."""

    def __init__(self, scope: Scope, keep_stopped: Callable[[Run], None]):
        self.scope, self.keep_stopped = scope, keep_stopped

    async def __call__(self, run: Run, source: Path | None, slots: asyncio.Semaphore) -> None:
        """`source`: the repo holding head when it is not the supervised one
        (the mirror of submitted commits); base is then given as its sha.
        The slot is awaited inside, so a run cancelled while queued is kept too."""
        recorder, backend = Recorder(self.scope.store, run.branch), ClosingBackend(self.scope.backend)
        try:
            async with slots:
                if run.status == RunState.CANCELLED:
                    return
                self._begin(run, backend)
                await self._gate(run, source, recorder, backend)
        except GateError as err:
            self._stopped(run, str(err))
            self.scope.emit(RunFailed(run.branch, run.run_id, str(err)))
        except asyncio.CancelledError:
            run.move_to(RunState.CANCELLED)
            raise
        except Exception as err:  # a bug, not the agent's fault: the consumer shows it
            self._stopped(run, f"{type(err).__name__}: {err}")
            raise
        finally:
            await self._end(run, recorder, backend)

    def _begin(self, run: Run, backend: ClosingBackend) -> None:
        backend.backend = self.scope.backend  # the one chosen when the run starts: `b` reaches queued runs
        run.backend = self.scope.backend.name
        run.move_to(RunState.RUNNING)
        self.scope.branches_changed()

    async def _gate(self, run: Run, source: Path | None, recorder: Recorder, backend: ClosingBackend) -> None:
        plan = await asyncio.to_thread(make_plan, await self._request(run, source))
        async for event in run_gate(plan, backend):
            event = self._as_supervised(run, event, source)
            recorder(event)
            self.scope.apply(run, event)
        run.record = recorder.record
        run.seal = str((recorder.record or {}).get("seal", ""))

    async def _request(self, run: Run, source: Path | None) -> GateRequest:
        scope = self.scope
        base = scope.base if source is None else await asyncio.to_thread(scope.base_sha)
        inputs = await asyncio.to_thread(gate_inputs, scope.store.root, scope.repo, scope.store)
        return gate_request(source or scope.repo, base, run.head, inputs, timeout=scope.timeout, run_id=run.run_id)

    def _as_supervised(self, run: Run, event: GateEvent, source: Path | None) -> GateEvent:
        """A submitted commit is gated in the mirror, and recorded as the supervised repo's."""
        if source is None or not isinstance(event, RunStarted):
            return event
        return dataclasses.replace(event, repo=str(self.scope.repo), base_ref=self.scope.base, head_ref=run.branch)

    def _stopped(self, run: Run, message: str) -> None:
        run.move_to(RunState.ERROR)
        run.message, run.finished_at = message, self.scope.clock()

    async def _end(self, run: Run, recorder: Recorder, backend: ClosingBackend) -> None:
        """The logs are closed and a stopped run kept even when a cancel
        lands here (a TUI's quit after a `c`): close_all finishes every
        close, then raises the cancel it caught."""
        try:
            await backend.close_all()  # waits for every close, cancelled or not
        finally:
            recorder.close_logs()
            if recorder.record is None and RunState(run.status).stopped:  # no verdict: kept too,
                self.keep_stopped(run)  # every run is shown after a restart
