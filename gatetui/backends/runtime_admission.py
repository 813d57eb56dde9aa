"""A cap on Runtime sandboxes alive at once, shared by every run in the process.

An account runs a fixed number of sandboxes at once (the free tier four), and
a create or fork past it is refused. A gate run holds its install's sandbox,
then (that one deleted) a sandbox for each of its runs: three, the base-tests
run and, when configured, the hidden-tests run. A cap taken one sandbox at a
time deadlocks: four runs each hold an install's sandbox, fill the cap, and
wait for sandboxes that only their own ends would make room for. Here a run
is admitted whole: it reserves every sandbox it will hold at once before it
creates the first, and asks for nothing more while it holds them. No run
waits while holding a slot, so no set of runs can wait on each other; runs
are admitted first come, first served, and a run ends by its time limits, so
a waiting run is always admitted in the end.

A run needs five at once with hidden tests, four without. Under a cap of
four, a run reserves four; under three, no run fits: preflight says so in one
line before any sandbox is made, instead of waiting forever.

The count is a plain integer under a thread lock and each waiter a future on
its own loop: a run's slots are given back from a worker thread when a cancel
sweeps it, and tests run one event loop after another in one process.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from gatetui.errors import BackendError

CAP_VARIABLE = "GATETUI_RUNTIME_MAX_SANDBOXES"
RUN_SANDBOXES = 5  # a sandbox per run, as gatetui.gate.runner forks them: 3 runs, base tests, hidden tests
TIGHT_RUN = RUN_SANDBOXES - 1  # without hidden tests


def cap_from_env() -> int | None:
    """The cap set in the environment: None when unset (no cap), 0 when it
    is not a whole number (preflight then says so)."""
    raw = os.environ.get(CAP_VARIABLE, "").strip()
    if not raw or raw.lower() in ("none", "unlimited"):
        return None
    return int(raw) if raw.isdigit() else 0


@dataclass
class Ticket:
    """A run's reserved slots; `count` None under no cap. Given back once."""

    cap: SandboxCap
    count: int | None
    _returned: bool = field(default=False, repr=False)

    def release(self) -> None:
        self.cap._give_back(self)


@dataclass
class _Waiter:
    count: int
    future: asyncio.Future[None]
    granted: bool = False


class SandboxCap:
    """At most `limit` sandboxes at once (None: no cap), reserved run by run."""

    def __init__(self, limit: int | None):
        self.limit = limit
        self.in_use = 0  # slots reserved by admitted runs
        self.peak = 0
        self.runs = 0  # runs admitted and not yet given back
        self._lock = threading.Lock()
        self._waiting: deque[_Waiter] = deque()

    @property
    def per_run(self) -> int:
        return RUN_SANDBOXES if self.limit is None else min(RUN_SANDBOXES, self.limit)

    def check(self) -> None:
        """One line, before any sandbox is made, when no run can fit."""
        if self.limit is not None and self.limit < TIGHT_RUN:
            shown = "not a whole number" if self.limit == 0 else f"{self.limit}"
            raise BackendError(
                f"runtime backend: a gate run needs {TIGHT_RUN} sandboxes at once (one for each "
                f"test run) but the cap on sandboxes at once (--max-sandboxes or {CAP_VARIABLE}) "
                f"is {shown}: set it to {TIGHT_RUN} or more, or unset it; `--backend local` needs nothing"
            )

    async def admit(self, on_wait: Callable[[str], None]) -> Ticket:
        """Reserve a whole run's slots, waiting (first come, first served)
        for runs ahead to give theirs back."""
        self.check()
        need = self.per_run
        if self.limit is None:
            with self._lock:
                self._take(need)
            return Ticket(self, None)
        waiter = _Waiter(need, asyncio.get_running_loop().create_future())
        with self._lock:
            if not self._waiting and self.in_use + need <= self.limit:
                self._take(need)
                return Ticket(self, need)
            self._waiting.append(waiter)
            ahead = self.runs
        on_wait(
            f"runtime: {ahead} run(s) hold the {self.limit} sandboxes allowed at once "
            f"({CAP_VARIABLE}); this run starts when one ends"
        )
        try:
            await waiter.future
        except asyncio.CancelledError:
            with self._lock:
                if waiter.granted:  # granted as it was cancelled: give it back
                    self._untake(need)
                    self._grant()
                else:
                    self._waiting.remove(waiter)
            raise
        return Ticket(self, need)

    def _take(self, count: int) -> None:
        self.in_use += count
        self.runs += 1
        self.peak = max(self.peak, self.in_use)

    def _untake(self, count: int) -> None:
        self.in_use -= count
        self.runs -= 1

    def _give_back(self, ticket: Ticket) -> None:
        with self._lock:
            if ticket._returned:
                return
            ticket._returned = True
            self._untake(self.per_run if ticket.count is None else ticket.count)
            self._grant()

    def _grant(self) -> None:
        """Admit waiting runs in order while they fit (called under the lock)."""
        assert self.limit is not None or not self._waiting
        while self._waiting and self.limit is not None and self.in_use + self._waiting[0].count <= self.limit:
            waiter = self._waiting.popleft()
            waiter.granted = True
            self._take(waiter.count)
            loop = waiter.future.get_loop()
            loop.call_soon_threadsafe(_resolve, waiter.future)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


_shared: dict[int | None, SandboxCap] = {}
_shared_lock = threading.Lock()


def shared_cap(limit: int | None) -> SandboxCap:
    """The process's one cap for `limit`: every run of a supervisor shares it."""
    with _shared_lock:
        return _shared.setdefault(limit, SandboxCap(limit))
