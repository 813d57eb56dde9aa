"""The selected check's output, streaming; keeps the last lines, says how many went."""

from __future__ import annotations

import re

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Static

from gatetui.gate.checks import CheckId
from gatetui.supervise.runs import LOG_LINES, Run
from gatetui.tui.widgets.loglines import LogLines

_DIGITS = re.compile(r"\d")
STREAM_FPS = 20  # how often streaming output redraws the log: each redraw draws every row on screen anew


class LogView(Vertical):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.shown_title = ""
        self.shown: tuple[Run | None, CheckId] = (None, CheckId.INSTALL)
        self.redraw: Timer | None = None  # new lines waiting for the next redraw

    def compose(self) -> ComposeResult:
        yield Static(id="log-title", markup=False)
        yield LogLines(id="log-lines")

    def show(self, run: Run | None, check: CheckId) -> None:
        """Follow `check` of `run`: its lines are drawn from the run's own buffer."""
        self.shown = (run, check)
        lines = self.query_one(LogLines)
        if run is None:
            lines.show(None)
            self.set_title("output: select a run")
            return
        buffer = run.log(check)
        lines.show(buffer)
        dropped = f", {buffer.dropped:,} earlier lines dropped (the last {LOG_LINES:,} kept)" if buffer.dropped else ""
        self.set_title(f"output of {check.value}: {buffer.total:,} lines{dropped}")

    def streamed(self, run: Run, check: CheckId) -> None:
        """`check` of `run` has new lines: shown with the next redraw, at most
        STREAM_FPS a second. At the frame rate (60 a second) a check that
        streams thousands of lines a second kept the loop drawing the log
        half the time, and a key pressed meanwhile waited."""
        self.shown = (run, check)
        if self.redraw is None:
            self.redraw = self.set_timer(1 / STREAM_FPS, self._redraw)

    def _redraw(self) -> None:
        self.redraw = None
        self.show(*self.shown)

    def set_title(self, title: str) -> None:
        """A new title takes a layout of the whole screen only when it may
        take another number of lines: not when both fit on one, nor when it
        only counted on (the same words, other digits), once a frame."""
        if title == self.shown_title:
            return
        label = self.query_one("#log-title", Static)
        room = label.content_region.width  # 0 before the first layout
        one_line = 0 < max(cell_len(title), cell_len(self.shown_title)) <= room
        counted = _DIGITS.sub("0", title) == _DIGITS.sub("0", self.shown_title)
        self.shown_title = title
        label.update(title, layout=not (one_line or counted))
