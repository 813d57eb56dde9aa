"""Every workspace closes, however often the gate is cancelled meanwhile.

A stopped run is cancelled more than once: the consumer's generator closes
(cancelling the gate), then asyncio.run cancels every task left. A loop of
shielded closes stopped at the second cancel, and the sandboxes of the
workspaces after it outlived the run (seen in CI: three of four left).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from gatetui.backends.base import close_all
from gatetui.backends.closing import ClosingBackend
from gatetui.backends.isolation import Isolation
from gatetui.backends.local import LocalBackend
from gatetui.gate.runner import account_of, isolation_of


class SlowToClose:
    """A workspace whose close takes until the test lets it end."""

    def __init__(
        self, name: str, gate: asyncio.Event, closed: list[str], fails: bool = False, started: list[str] | None = None
    ):
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


class Opened:
    """A workspace that counts the calls to its close, and closes once (as
    the Workspace protocol says every workspace does)."""

    def __init__(self, label: str):
        self.label, self.calls, self.closes = label, 0, 0

    async def close(self) -> None:
        self.calls += 1
        self.closes = 1


class Bare:
    """A backend with the Backend protocol's members and nothing else the runner could read:
    not measured, no account figures, no isolation to report."""

    name = "bare"
    measured = False
    isolation = None

    async def account(self) -> dict[str, float] | None:
        return None

    def __init__(self) -> None:
        self.preflights: list[tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]] = []
        self.work_root = "/not/forwarded"

    @property
    def notes(self) -> tuple[str, ...]:
        return (f"{self.name}: a note",)

    async def preflight(self, tools: tuple[tuple[str, ...], ...], indexes: tuple[str, ...] = ()) -> None:
        self.preflights.append((tools, indexes))

    async def open(self, export: object, label: str) -> Opened:
        return Opened(label)


class Declaring(Bare):
    """A backend that declares all three capabilities the runner reads."""

    name = "declaring"
    measured = True
    isolation = Isolation(True, True, True, True, True, fork_mode="overlay")

    async def account(self) -> dict[str, float]:
        return {"available": 4.5, "spent": 0.5}


def test_the_protocols_members_reach_the_wrapped_backend() -> None:
    backend = Bare()
    closing = ClosingBackend(backend)

    async def scenario() -> Opened:
        await closing.preflight((("python3", "--version"),), ("pip",))
        await closing.preflight((("npm", "--version"),))
        workspace = await closing.open(lambda path: None, "install")
        await workspace.close()  # the runner's close, then the run's end's
        await closing.close_all()
        assert isinstance(workspace, Opened)
        return workspace

    opened = asyncio.run(scenario())
    assert (closing.name, closing.notes) == ("bare", ("bare: a note",))
    assert backend.preflights == [((("python3", "--version"),), ("pip",)), ((("npm", "--version"),), ())]
    assert (opened.label, opened.calls, opened.closes, closing.opened) == ("install", 2, 1, [opened])


def test_nothing_else_of_the_backend_is_forwarded() -> None:
    closing = ClosingBackend(Bare())
    with pytest.raises(AttributeError):
        closing.work_root  # type: ignore[attr-defined]  # noqa: B018
    assert not hasattr(closing, "uids")


def test_a_backend_put_in_place_is_the_one_read() -> None:
    """The supervisor swaps in the backend chosen when a queued run starts."""
    first, chosen = Bare(), Declaring()
    closing = ClosingBackend(first)
    closing.backend = chosen
    asyncio.run(closing.preflight((("go", "version"),), ("go",)))
    assert (closing.name, closing.notes, closing.measured) == ("declaring", ("declaring: a note",), True)
    assert (first.preflights, chosen.preflights) == ([], [((("go", "version"),), ("go",))])


@pytest.mark.parametrize(
    "backend, measured, account, isolation",
    [
        (Bare(), False, {}, {}),
        (
            Declaring(),
            True,
            {"available": 4.5, "spent": 0.5},
            {
                "separate_uid": True,
                "network_namespace": True,
                "pid_namespace": True,
                "private_tmp": True,
                "limits": True,
                "enforced": True,
                "reason": "",
                "fork_mode": "overlay",
            },
        ),
    ],
)
def test_the_runner_reads_the_same_capabilities_through_the_wrapper(
    backend: Bare, measured: bool, account: dict[str, float], isolation: dict[str, object]
) -> None:
    """What the runner reads by name (the cost's `measured`, the account's
    credit, the isolation for the JSON) is the same wrapped as bare."""
    closing = ClosingBackend(backend)
    seen = [(b.measured, asyncio.run(account_of(b)), isolation_of(b)) for b in (backend, closing)]
    assert seen == [(measured, account, isolation)] * 2


def test_the_backends_news_reaches_the_sink_set_on_the_wrapper(tmp_path: Path) -> None:
    """The TUI sets `on_progress` on the backend it is handed (a run's
    wrapper or the bare backend): either way the backend itself speaks there."""
    backend = LocalBackend(work_root=tmp_path, fork_mode="bind", isolate=False)
    heard: list[str] = []
    ClosingBackend(backend).on_progress = heard.append
    backend.on_progress("runtime: deleted 2 sandbox(es) left by a crashed run")
    assert heard == ["runtime: deleted 2 sandbox(es) left by a crashed run"]
