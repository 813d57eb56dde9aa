"""A run's sandboxes and their cleanup, shared by a workspace and its forks.

Split from runtime.py; like it, it imports `withruntime` only when called.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any

from gatetui.backends.base import ProgressSink
from gatetui.backends.runtime_admission import Ticket
from gatetui.backends.runtime_errors import describe, not_found


def sdk() -> Any:
    import withruntime  # lazily: only the runtime backend needs it

    return withruntime


class RunFamily:
    """A run's client and its live sandboxes, shared by a workspace and its
    forks; the run's cleanup happens when the last of them closes.

    Deletes go through the SDK's sync client on a worker thread: a task can
    be cancelled mid-call (asyncio.run cancels every task when its consumer
    raises, shielded ones included), but a thread runs to its end, and
    asyncio.run waits for it before returning."""

    def __init__(
        self,
        client: Any,
        run_labels: dict[str, str],
        progress: ProgressSink,
        env: dict[str, str],
        grace: float,
        ticket: Ticket | None = None,
    ):
        self.client, self.run_labels, self.progress, self.env = client, run_labels, progress, env
        self.ticket = ticket  # the run's slots under the cap, given back once all is deleted
        self.grace = grace  # past a command's limit, before we stop waiting for Runtime
        self.live: dict[str, Any] = {}
        self.open = 0
        self._sync: Any = None
        self._sync_lock = threading.Lock()
        self._swept_all = False
        self._swept: asyncio.Future[None] | None = None

    def sweep_soon(self) -> None:
        """On a cancel: sweep the whole run on an executor thread, without
        waiting. The task that would have closed the workspaces may be
        cancelled again before it does; asyncio.run still joins this thread."""
        if self._swept is None:
            self._swept = asyncio.get_running_loop().run_in_executor(None, self._sweep_now)

    def _deleter(self) -> Any:
        """The sync client deletes go through, made on first use."""
        with self._sync_lock:
            if self._sync is None:
                self._sync = sdk().Runtime()
            return self._sync

    def _close_deleter(self) -> None:
        """Close the sync client's kept-alive connections now: left to the
        garbage collector, a socket may be finalized before the pool that
        would have closed it (an unclosed-socket warning, at some later time)."""
        with self._sync_lock:
            sync, self._sync = self._sync, None
        if sync is not None:
            with contextlib.suppress(Exception):
                sync.close()

    def _delete_now(self, sandbox_id: str) -> None:
        self.live.pop(sandbox_id, None)
        try:
            self._deleter().sandboxes.delete(sandbox_id)
        except Exception as err:
            if not not_found(err):
                self.progress(
                    f"runtime: could not delete sandbox {sandbox_id} ({describe(err)}); "
                    "Runtime deletes it at its time limit"
                )
        finally:
            if self._swept_all:  # a delete racing a finished sweep: its client closes with it
                self._close_deleter()

    def _sweep_now(self) -> None:
        """Whatever is left of the run, by id and by run label (a sandbox
        whose create answer was lost to a cancel is found by its label,
        even when no id is known: the client is made for the sweep)."""
        try:
            for sandbox_id in list(self.live):
                self._delete_now(sandbox_id)
            with contextlib.suppress(Exception):
                for sandbox in list(self._deleter().sandboxes.list(labels=self.run_labels)):
                    self._delete_now(sandbox.id)
        finally:
            self._swept_all = True
            self._close_deleter()
            if self.ticket is not None:
                self.ticket.release()

    @property
    def reserved(self) -> int | None:
        """How many sandboxes this run may hold at once; None: no cap."""
        return None if self.ticket is None else self.ticket.count

    async def delete(self, sandbox_id: str) -> None:
        await asyncio.to_thread(self._delete_now, sandbox_id)

    async def release(self) -> None:
        self.open -= 1
        if self.open <= 0:
            await self.abandon()

    async def abandon(self) -> None:
        try:
            await asyncio.to_thread(self._sweep_now)
        except asyncio.CancelledError:
            self.sweep_soon()
            raise
        with contextlib.suppress(Exception):
            await self.client.close()
