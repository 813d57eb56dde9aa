"""The selected check's output, streaming; keeps the last lines, says how many went."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Log, Static

from gatetui.gate.checks import CheckId
from gatetui.inert import inert
from gatetui.supervise.runs import LOG_LINES, Run


class LogView(Vertical):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.source: tuple[str, CheckId] | None = None
        self.seen = 0

    def compose(self) -> ComposeResult:
        yield Static(id="log-title", markup=False)
        yield Log(max_lines=LOG_LINES, id="log-lines")

    def show(self, run: Run | None, check: CheckId) -> None:
        """Follow `check` of `run`; only new lines are written."""
        log = self.query_one(Log)
        source = (run.run_id, check) if run else None
        if source != self.source:
            self.source, self.seen = source, 0
            log.clear()
        if run is None:
            self.query_one("#log-title", Static).update("output: select a run")
            return
        buffer = run.log(check)
        lines, restart = buffer.since(self.seen)
        if restart:
            log.clear()
        if lines:
            log.write_lines([inert(line) for line in lines])  # the tests' output: Log drops only C0
        self.seen = buffer.total
        dropped = f", {buffer.dropped:,} earlier lines dropped (the last {LOG_LINES:,} kept)" if buffer.dropped else ""
        self.query_one("#log-title", Static).update(f"output of {check.value}: {buffer.total:,} lines{dropped}")
