"""The rules lab, live: every scenario gated under a rules file, the matrix
(scenario x check, expected vs actual) filling in as each gate ends, so a
workshop can edit a rule, press r and watch which cheats it now catches."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from gatetui.config import SealSettings, load_seal_file
from gatetui.errors import GateError
from gatetui.inert import inert
from gatetui.lab.rules import LabEvent, stream_lab
from gatetui.lab.samples import SAMPLES_DIR
from gatetui.tui.widgets.labmatrix import LEGEND, LabMatrix, LabState, status_line, summary_text

LabSource = Callable[[Path, SealSettings | None], AsyncIterator[LabEvent]]


class LabScreen(Screen[None]):
    BINDINGS = [Binding("r", "rerun", "re-run (rules read again)"), Binding("escape", "app.pop_screen", "back")]

    @dataclass
    class Progressed(Message):
        """A lab event, from the lab worker of run `generation`."""

        generation: int
        event: LabEvent

    @dataclass
    class Failed(Message):
        """Bad input: the rules file or a scenario; said on the screen."""

        generation: int
        message: str

    def __init__(self, scenarios: Path | None = None, rules: Path | None = None, source: LabSource | None = None):
        super().__init__()
        self.scenarios, self.rules, self.source = scenarios or SAMPLES_DIR, rules, source or stream_lab
        self.state = LabState()
        self.generation = 0

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(inert(self.heading()), id="lab-head", markup=False)
        yield LabMatrix(id="lab-matrix", cursor_type="row")
        yield Static(id="lab-status", markup=False)
        with VerticalScroll(id="lab-summary"):
            yield Static(id="lab-summary-text", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.action_rerun()

    def heading(self) -> str:
        rules = (
            f"the rules in {self.rules} replace each scenario's own (edit them, then r)"
            if self.rules
            else "each scenario's own rules (base's [tool.gatetui.seal])"
        )
        return f"rules lab: the scenarios in {self.scenarios}\n{rules}\n{LEGEND}"

    def action_rerun(self) -> None:
        """Start over: the rules file and the scenarios read again; a lab
        in progress is cancelled (its gates' workspaces removed)."""
        self.generation += 1
        self.state = LabState()
        self.show()
        self.run_lab(self.generation)

    @work(group="lab", exclusive=True, exit_on_error=False)
    async def run_lab(self, generation: int) -> None:
        try:
            seal = await asyncio.to_thread(load_seal_file, self.rules) if self.rules else None
            async for event in self.source(self.scenarios, seal):
                self.post_message(self.Progressed(generation, event))
        except GateError as err:
            self.post_message(self.Failed(generation, str(err)))

    def on_lab_screen_progressed(self, message: Progressed) -> None:
        if message.generation == self.generation:  # a cancelled run's last words are dropped
            self.state.apply(message.event)
            self.show()

    def on_lab_screen_failed(self, message: Failed) -> None:
        if message.generation == self.generation:
            self.state.error = message.message
            self.show()

    def show(self) -> None:
        self.query_one(LabMatrix).show(self.state)
        self.query_one("#lab-status", Static).update(inert(status_line(self.state, self.generation)))
        self.query_one("#lab-summary-text", Static).update(inert(summary_text(self.state)))
