"""The watched branches: head, latest verdict, when."""

from __future__ import annotations

from collections.abc import Iterable

from gatetui.supervise.runs import Branch
from gatetui.tui.format import VERDICT_WORD, ago, short
from gatetui.tui.widgets.tables import KeyedTable, status_text


class BranchTable(KeyedTable):
    COLUMNS = (("branch", "branch"), ("head", "head"), ("verdict", "verdict"), ("when", "when"))

    def show(self, branches: Iterable[Branch], now: float) -> None:
        rows = {}
        for branch in branches:
            latest = branch.latest
            when = None
            if latest is not None:
                when = latest.finished_at if not latest.in_progress and latest.finished_at else latest.started_at
            word = VERDICT_WORD.get(branch.status, branch.status)
            name = f"{branch.name} ESCALATED" if branch.escalated else branch.name
            rows[branch.name] = (name, short(branch.head), status_text(word), ago(when, now))
        self.sync(rows)


class RunsTable(KeyedTable):
    """The selected branch's runs, newest first (history included)."""

    COLUMNS = (("when", "when"), ("verdict", "verdict"), ("head", "head"), ("review", "review"))
    shown: str | None = None

    def show(self, branch: Branch | None, now: float, shown: str | None = None) -> None:
        """`shown`: the run on screen; the cursor goes to it when it changes
        (a new latest run), and otherwise stays where the user moved it."""
        rows = {}
        for run in reversed(branch.runs if branch else []):
            when = run.finished_at or run.started_at
            word = VERDICT_WORD.get(run.status, run.status)
            rows[run.run_id] = (ago(when, now), status_text(word), short(run.head), run.review or "")
        self.sync(rows)
        if shown != self.shown and shown in rows:
            self.move_cursor(row=list(rows).index(shown), animate=False)
        self.shown = shown
