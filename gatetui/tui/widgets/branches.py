"""The watched branches: head, latest verdict, when."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rich.text import Text

from gatetui.supervise.runs import Branch
from gatetui.tui.format import VERDICT_WORD, ago, short
from gatetui.tui.widgets.tables import Cell, KeyedTable, as_text, status_text


class BranchTable(KeyedTable):
    """Branch names give way: a long one ends in an ellipsis so that the
    head, verdict and when columns always show whole (the verdict column
    was cut to `verdic`, `runnin`, `at bas` in the workshop's 75 branches)."""

    COLUMNS = (("branch", "branch"), ("head", "head"), ("verdict", "verdict"), ("when", "when"))
    NAME_LEAST = 8  # columns a branch name keeps however narrow the table (80 columns: 9)
    ESCALATED = " ESCALATED"
    shown: tuple[list[Branch], float] = ([], 0.0)

    def show(self, branches: Iterable[Branch], now: float) -> None:
        self.shown = (list(branches), now)
        rows: dict[str, tuple[Cell, ...]] = {}
        for branch in self.shown[0]:
            latest = branch.latest
            when = None
            if latest is not None:
                when = latest.finished_at if not latest.in_progress and latest.finished_at else latest.started_at
            word = VERDICT_WORD.get(branch.status, branch.status)
            rows[branch.name] = (short(branch.head), status_text(word), ago(when, now))
        width = self.name_width(rows)
        self.sync({name: (self.name_cell(self.shown[0][i], width), *cells)
                   for i, (name, cells) in enumerate(rows.items())})

    def on_resize(self) -> None:
        """The room for names changed (a resize, the narrow layout): fit them again."""
        self.show(*self.shown)

    def name_width(self, rows: Mapping[str, Sequence[Cell]]) -> int | None:
        """What is left for the names once the other columns (each as wide as
        its widest cell or label), the cells' padding and a scrollbar (when
        the rows overflow) are served; None before the table has a size."""
        room = self.content_region.width
        if room <= 0:
            return None
        if len(rows) + 1 > self.content_region.height:  # the header's row and the branches'
            room -= self.styles.scrollbar_size_vertical
        others = sum(max([len(label), *(as_text(cells[i]).cell_len for cells in rows.values())])
                     for i, (_, label) in enumerate(self.COLUMNS[1:]))
        return max(self.NAME_LEAST, room - others - 2 * self.cell_padding * len(self.COLUMNS))

    def name_cell(self, branch: Branch, width: int | None) -> Text:
        """The name, escaped, cut to `width` with an ellipsis; an escalated
        branch keeps its ESCALATED whole."""
        name = as_text(branch.name)
        suffix = self.ESCALATED if branch.escalated else ""
        if width is not None and name.cell_len + len(suffix) > width:
            name.truncate(max(1, width - len(suffix)), overflow="ellipsis")
        return name + suffix if suffix else name


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
