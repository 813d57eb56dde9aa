"""Every workspace closes, however often the gate is cancelled meanwhile.

A stopped run is cancelled more than once: the consumer's generator closes
(cancelling the gate), then asyncio.run cancels every task left. A loop of
shielded closes stopped at the second cancel, and the sandboxes of the
workspaces after it outlived the run (seen in CI: three of four left).
"""

from __future__ import annotations

import asyncio

import pytest

from gatetui.backends.base import close_all


class SlowToClose:
    """A workspace whose close takes until the test lets it end."""

    def __init__(self, name: str, gate: asyncio.Event, closed: list[str], fails: bool = False,
                 started: list[str] | None = None):
        self.name, self.gate, self.closed, self.fails = name, gate, closed, fails
        self.started = [] if started is None else started

    async def close(self) -> None:
        self.started.append(self.name)
        await self.gate.wait()
        self.closed.append(self.name)
        if self.fails:
            raise OSError(f"{self.name} would not close")


def test_every_workspace_closes_when_the_caller_is_cancelled_twice_meanwhile() -> None:
    closed: list[str] = []

    async def scenario() -> None:
        gate = asyncio.Event()
        workspaces = [SlowToClose(f"copy{i}", gate, closed) for i in range(4)]
        closer = asyncio.create_task(close_all(workspaces))
        for _ in range(2):
            await asyncio.sleep(0)  # lets the closer reach its wait: a cancel then lands mid-close
            closer.cancel()
        gate.set()
        with pytest.raises(asyncio.CancelledError):
            await closer

    asyncio.run(scenario())
    assert sorted(closed) == ["copy0", "copy1", "copy2", "copy3"]


def test_a_workspace_that_fails_to_close_does_not_keep_the_others_open() -> None:
    closed: list[str] = []

    async def scenario() -> None:
        gate = asyncio.Event()
        gate.set()
        workspaces = [SlowToClose("copy0", gate, closed, fails=True), SlowToClose("copy1", gate, closed)]
        with pytest.raises(OSError, match="copy0 would not close"):
            await close_all(workspaces)

    asyncio.run(scenario())
    assert closed == ["copy0", "copy1"]


def test_asyncio_run_ending_mid_close_still_closes_every_workspace() -> None:
    """The CI case: the main task ends while the gate's task is closing, and
    asyncio.run cancels every task it finds, close tasks that never took
    their first step included: those are begun again."""
    closed: list[str] = []

    async def scenario() -> None:
        gate = asyncio.Event()

        async def gate_task() -> None:
            try:
                await asyncio.Event().wait()  # the suite, never ending
            finally:
                await close_all([SlowToClose(f"copy{i}", gate, closed) for i in range(4)])

        task = asyncio.create_task(gate_task())
        await asyncio.sleep(0)
        task.cancel()  # the consumer's generator closing; asyncio.run cancels again as main returns
        asyncio.get_running_loop().call_later(0.05, gate.set)  # the closes can end only after that

    asyncio.run(scenario())
    assert sorted(closed) == ["copy0", "copy1", "copy2", "copy3"]
