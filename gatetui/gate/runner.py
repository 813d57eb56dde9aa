"""The gate runner: one async stream of typed events per gate run.

Diff checks answer first, before any sandbox exists. Then a fresh workspace
installs head; its copies run the suite three times (the third in a random
order with `random_order`), base's tests once and the hidden tests once,
side by side. With `baseline`, base's own suite runs meanwhile in a
workspace of its own (or comes from the caller's cache). Every command's
output streams out as it arrives, and every workspace is closed however the
run ends (pass, fail, error, a consumer that stops listening).

The phases live in gatetui/gate/phases/; this module puts them in order and
settles what a phase that never came leaves open, by what each check
declares it needs (gatetui/gate/checks/registry.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator

from gatetui.backends.base import Backend, Workspace, close_all
from gatetui.errors import BackendError
from gatetui.gate.checks import CHECK_ORDER, DIFF_ONLY, CheckResult, Need, Status, decide
from gatetui.gate.events import DigestsComputed, GateEvent, RunFinished, RunStarted
from gatetui.gate.phases import announced
from gatetui.gate.phases.base_own import BaseOwn
from gatetui.gate.phases.build import BuildPhase
from gatetui.gate.phases.context import Context
from gatetui.gate.phases.ledger import Emit, Ledger
from gatetui.gate.phases.one_run import SuiteRunner
from gatetui.gate.phases.suite import SuitePhase
from gatetui.gate.plan import Plan


async def run_gate(plan: Plan, backend: Backend) -> AsyncGenerator[GateEvent, None]:
    """Yield the gate's events; the last one is RunFinished.

    Queued events are handed over without a wait each, so a flood of output
    from side-by-side runs never piles up between the gate and its consumer.
    """
    queue: asyncio.Queue[GateEvent] = asyncio.Queue()
    gate = _Gate(plan, backend, queue.put_nowait)
    task = asyncio.create_task(gate.execute())
    getter: asyncio.Future[GateEvent] | None = None
    try:
        while True:
            if not queue.empty():
                yield queue.get_nowait()
                continue
            getter = asyncio.ensure_future(queue.get())
            await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                yield getter.result()
                continue
            getter.cancel()
            while not queue.empty():
                yield queue.get_nowait()
            task.result()
            return
    finally:
        if getter is not None and not getter.done():
            getter.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


class _Gate:
    """One gate run: the phases in order, each check answered once."""

    def __init__(self, plan: Plan, backend: Backend, emit: Emit):
        self.plan, self.backend, self.emit = plan, backend, emit
        self.ledger = Ledger(emit, plan.timeout, backend.measured)
        self.ctx = Context.of(plan, backend, self.ledger)
        runner = SuiteRunner(self.ctx)
        self.base = BaseOwn(self.ctx, runner)
        self.build = BuildPhase(self.ctx)
        self.suite = SuitePhase(self.ctx, runner, self.base)

    async def execute(self) -> None:
        profile = self.plan.profile
        preflight = asyncio.create_task(self.backend.preflight(profile.install.tools, profile.stack.indexes))
        self._started()
        announced.announce(self.ctx)
        await preflight  # a missing tool is raised to the consumer: nothing was judged
        workspace: Workspace | None = None
        self.base.start_baseline()
        try:
            workspace = await self.build.install()
            if workspace is None:
                self._install_failed()
            else:
                await self.suite.run(workspace)
        except BackendError as err:
            self.ledger.error_open(str(err))
        except OSError as err:  # a full disk, a vanished directory: the gate's problem
            self.ledger.error_open(f"the gate could not go on: {err}")
        finally:
            await self._close(workspace)
        self.ledger.account = await account_of(self.backend)
        self._done()

    def _started(self) -> None:
        plan = self.plan
        self.emit(
            RunStarted(
                run_id=plan.request.run_id,
                repo=str(plan.repo.path),
                base_ref=plan.request.base,
                head_ref=plan.request.head,
                base=plan.base.sha,
                head=plan.head.sha,
                backend=self.backend.name,
                stack=plan.profile.stack.name,
                checks=CHECK_ORDER,
                notes=self.backend.notes,
                isolation=isolation_of(self.backend),
            )
        )
        self.emit(DigestsComputed(plan.digests))

    def _install_failed(self) -> None:
        """No install, no runs: a check that needs them is not run, then one
        that reads the diff too says what the diff said (a failure from the
        diff was said already, once)."""
        why = "install failed"
        self.ledger.not_run(
            [s.id for s in self.ledger.open() if not s.reads_diff and Need.INSTALL in s.needs], f"not run: {why}"
        )
        self.ledger.finish_open(
            CheckResult(s.id, Status.PASS, f"{DIFF_ONLY}: {why}") for s in self.ledger.open() if s.reads_diff
        )

    async def _close(self, workspace: Workspace | None) -> None:
        """Close what the run opened (the install's workspace too, when it
        was cancelled mid-install or failed); base's own run is stopped
        meanwhile (its own finally closes base's workspace)."""
        running = self.base.stop()
        try:
            await close_all([w for w in (workspace, self.build.opened) if w is not None])
        finally:
            await self.base.stopped(running)
            if self.ctx.layers is not None:
                self.ctx.layers.release()

    def _done(self) -> None:
        ledger = self.ledger
        self.emit(
            RunFinished(
                verdict=decide(ledger.in_order(), self.ctx.policy_fails()),
                results=ledger.in_order(),
                digests=self.ctx.digests(),
                cost=ledger.cost(),
                seconds=round(time.monotonic() - ledger.clock, 3),
                notes=(*self.backend.notes, *self.ctx.notes),
                baseline=self.base.info,
            )
        )


async def account_of(backend: Backend) -> dict[str, float]:
    """What the backend's account says of its credit after the run (Runtime:
    available and spent dollars); never a reason for the gate to fail."""
    try:
        credit = await asyncio.wait_for(backend.account(), 15)
    except Exception:  # noqa: BLE001 - a figure for the credit table, nothing more
        return {}
    return {} if credit is None else dict(credit)


def isolation_of(backend: Backend) -> dict[str, object]:
    """What the backend enforces, for the JSON ({} from one with nothing of
    this machine's to report)."""
    isolation = backend.isolation
    return {} if isolation is None else dict(isolation.to_json())


__all__ = ["run_gate"]
