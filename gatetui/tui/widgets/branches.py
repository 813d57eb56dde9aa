"""The watched branches: head, latest verdict, when."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rich.text import Text

from gatetui.supervise.runs import Branch
from gatetui.tui.format import VERDICT_WORD, ago, short
from gatetui.tui.widgets.tables import Cell, KeyedTable, as_text, status_text


class BranchTable(KeyedTable):
    """The verdict always shows whole (in the workshop's 75 branches it was
    cut to `verdic`, `runnin`, `at bas` by the names' width). Where the
    pane is short of room, the head column goes first (the run's title
    shows it), then `when` (the runs table shows it); only then does a
    long name give way, ending in an ellipsis."""

    ALL: tuple[tuple[str, str], ...] = (("branch", "branch"), ("head", "head"), ("verdict", "verdict"), ("when", "when"))
    COLUMNS = ALL
    OPTIONAL = ("head", "when")  # left out in this order when the names need the room
    NAME_LEAST = 8  # columns a branch name keeps however narrow the table
    ESCALATED = " ESCALATED"
    shown: tuple[list[Branch], float] = ([], 0.0)

    def show(self, branches: Iterable[Branch], now: float) -> None:
        self.shown = (list(branches), now)
        rows: dict[str, dict[str, Cell]] = {}
        for branch in self.shown[0]:
            latest = branch.latest
            when = None
            if latest is not None:
                when = latest.finished_at if not latest.in_progress and latest.finished_at else latest.started_at
            word = VERDICT_WORD.get(branch.status, branch.status)
            rows[branch.name] = {"head": short(branch.head), "verdict": status_text(word), "when": ago(when, now)}
        kept, width = self.fit(rows)
        self.COLUMNS = tuple(column for column in self.ALL if column[0] in ("branch", "verdict", *kept))
        self.sync({b.name: (self.name_cell(b, width), *(rows[b.name][key] for key, _ in self.COLUMNS[1:]))
                   for b in self.shown[0]})

    def on_resize(self) -> None:
        """The room changed (a resize, the narrow layout): fit the columns again."""
        self.show(*self.shown)

    def fit(self, rows: Mapping[str, Mapping[str, Cell]]) -> tuple[tuple[str, ...], int | None]:
        """The columns kept beside the names and verdicts, and the names'
        width (None: whole, the table has no size yet)."""
        room = self.content_region.width
        if room <= 0:
            return self.OPTIONAL, None
        if len(rows) + 1 > self.content_region.height:  # the header's row and the branches': a scrollbar
            room -= self.styles.scrollbar_size_vertical
        pad = 2 * self.cell_padding
        widths = {key: max([len(label), *(as_text(cells[key]).cell_len for cells in rows.values())]) + pad
                  for key, label in self.ALL[1:]}
        names = max([len(self.ALL[0][1]), *(as_text(b.name).cell_len + len(self.suffix(b))
                                              for b in self.shown[0])]) + pad
        kept = list(self.OPTIONAL)
        while kept and names + widths["verdict"] + sum(widths[key] for key in kept) > room:
            kept.pop(0)
        return tuple(kept), max(self.NAME_LEAST, room - pad - widths["verdict"] - sum(widths[key] for key in kept))

    def suffix(self, branch: Branch) -> str:
        return self.ESCALATED if branch.escalated else ""

    def name_cell(self, branch: Branch, width: int | None) -> Text:
        """The name, escaped, cut to `width` with an ellipsis; an escalated
        branch keeps its ESCALATED whole."""
        name, suffix = as_text(branch.name), self.suffix(branch)
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
