"""What bench/tui_bench.py measures on a screen, wherever the screen runs:
the supervisor's own (in the bench's process) or a viewer (bench/tui_viewer.py,
a process of its own). Each screen's figures travel as one JSON object."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import resource
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from textual import events
from textual.message import Message
from textual.widgets import DataTable

from gatetui.gate.checks import CheckId, Status
from gatetui.tui.app import GatetuiApp
from gatetui.tui.viewer import ViewerApp

Shown = GatetuiApp | ViewerApp
SIZE = (150, 46)


def now() -> float:
    """One clock for every process on the machine (a viewer's times start in the bench)."""
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass
class Figures:
    """One screen's figures: commit -> first check row (ms per commit), key
    presses while a check streams (ms each), peak RSS of its process."""

    commits: list[float] = field(default_factory=list)
    keys: list[float] = field(default_factory=list)
    missed: int = 0  # presses whose effect did not come within a second
    streamed: int = 0  # lines the check streamed while keys were pressed
    seconds: float = 0.0  # how long it streamed
    rss_mb: float = 0.0

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Figures:
        data: dict[str, Any] = json.loads(text)
        return cls(**data)


def first_row_moved(app: Shown, sha: str) -> bool:
    """The screen shows a run of `sha` with a check no longer waiting."""
    run = app.main.run
    if run is None or run.head != sha:
        return False
    table = app.main.query_one("#checks", DataTable)
    return any(str(table.get_cell(k, "status")) not in ("waiting", "") for k in table.rows)


class KeyProbe:
    """Key presses posted as a terminal would, each timed until its effect:
    the checks table's cursor on the row the key moves it to (a rebuild of
    the table that highlights some other row is not the key's effect)."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.missed = 0
        self.answered = asyncio.Event()
        self._pending: tuple[int, float] | None = None  # (row expected, when posted)

    def hook(self, message: Message) -> None:
        if (
            isinstance(message, DataTable.RowHighlighted)
            and self._pending is not None
            and message.cursor_row == self._pending[0]
        ):
            self.times.append((now() - self._pending[1]) * 1000)
            self._pending = None
            self.answered.set()

    async def press(self, app: Shown, table: DataTable[object]) -> None:
        row = table.cursor_row
        key, expected = ("down", row + 1) if row == 0 else ("up", row - 1)
        self.answered.clear()
        self._pending = (expected, now())
        app.post_message(events.Key(key, None))
        try:
            await asyncio.wait_for(self.answered.wait(), 1.0)
        except TimeoutError:
            self._pending, self.missed = None, self.missed + 1


async def press_while_streaming(app: Shown, probe: KeyProbe, figures: Figures) -> None:
    """Keys pressed from the moment the install check starts streaming
    until it ends (pressing before it streams measures an idle screen)."""

    def install() -> Status:
        run = app.main.run
        return run.checks[CheckId.INSTALL].status if run is not None else Status.WAITING

    table = app.main.query_one("#checks", DataTable)
    table.focus()
    while install() is Status.WAITING:
        await asyncio.sleep(0.005)
    started = now()
    while install() is Status.RUNNING:
        await probe.press(app, table)
        await asyncio.sleep(0.05)
    figures.seconds = now() - started
    run = app.main.run
    figures.streamed = run.logs[CheckId.INSTALL].total if run is not None and CheckId.INSTALL in run.logs else 0
    figures.keys, figures.missed = probe.times, probe.missed


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) >= 2 else values[0]


def verdict(value: float, target: float) -> str:
    return f"target < {target:g}: {'met' if value < target else 'MISSED'}"


def report(on: str, figures: Figures, parts: str) -> None:
    """The figures as lines, each against its target; a target missed says MISSED."""
    commits = figures.commits
    median = statistics.median(commits)
    print(
        f"{on}commit -> first check row updated: median {median:.0f} ms "
        f"(min {min(commits):.0f}, max {max(commits):.0f}, {len(commits)} commits; {verdict(median, 150)})"
    )
    missed = f", {figures.missed} without effect within 1 s" if figures.missed else ""
    lines = f"{figures.streamed:,} lines in {figures.seconds:.1f} s"
    if figures.keys:
        keys = figures.keys
        print(
            f"{on}key press while streaming {lines}: p95 {p95(keys):.1f} ms, "
            f"median {statistics.median(keys):.1f} ms ({len(keys)} presses{missed}; {verdict(p95(keys), 16)})"
        )
    else:
        print(f"{on}key press while streaming {lines}: no press measured{missed}")
    print(f"{on}peak RSS: {figures.rss_mb:.0f} MB ({parts})", flush=True)
