"""The watched branches: head, latest verdict, when."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text

from gatetui.supervise.runs import Branch
from gatetui.tui.format import VERDICT_WORD, ago, short
from gatetui.tui.widgets.tables import KeyedTable, as_text, status_text


class BranchTable(KeyedTable):
    """The verdict always shows whole (in the workshop's 75 branches it was
    cut to `verdic`, `runnin`, `at bas` by the names' width). Where the
    pane is short of room, the head column goes first (the run's title
    shows it), then `when` (the runs table shows it); only then does a
    long name give way, ending in an ellipsis."""

    COLUMNS = (("branch", "branch"), ("head", "head"), ("verdict", "verdict"), ("when", "when"))
    OPTIONAL = ("head", "when")
    NAME_LEAST = 8  # columns a branch name keeps however narrow the table
    ESCALATED = " ESCALATED"

    def show(self, branches: Iterable[Branch], now: float) -> None:
        rows = {}
        for branch in branches:
            latest = branch.latest
            when = None
            if latest is not None:
                when = latest.finished_at if not latest.in_progress and latest.finished_at else latest.started_at
            word = VERDICT_WORD.get(branch.status, branch.status)
            name = as_text(branch.name) + (self.ESCALATED if branch.escalated else "")
            rows[branch.name] = (name, short(branch.head), status_text(word), ago(when, now))
        self.sync(rows)

    def give_way(self, rows: dict[str, list[Text]], over: int) -> dict[str, list[Text]]:
        """The names, `over` columns shorter, each cut with an ellipsis (an
        escalated branch keeps its ESCALATED whole)."""
        width = max(self.NAME_LEAST, max(cells[0].cell_len for cells in rows.values()) - over)
        for cells in rows.values():
            name = cells[0]
            if name.cell_len > width:
                suffix = self.ESCALATED if name.plain.endswith(self.ESCALATED) else ""
                name = name[: len(name) - len(suffix)] if suffix else name.copy()
                name.truncate(max(1, width - len(suffix)), overflow="ellipsis")
                cells[0] = name + suffix if suffix else name
        return rows


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
