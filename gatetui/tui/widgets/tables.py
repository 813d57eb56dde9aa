"""Keyed tables: rows updated in place, so the cursor stays where the user put it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import RowDoesNotExist

from gatetui.inert import inert_line

Cell = str | Text
STATUS_STYLE = {
    "pass": "bold green",
    "FAIL": "bold red",
    "ERROR": "bold magenta",
    "REVIEW": "bold yellow",
    "running": "bold cyan",
    "queued": "cyan",
    "stale": "dim yellow",
    "skip": "dim",
    "cancelled": "dim",
    "waiting": "dim",
    "accepted": "green",
    "REJECTED": "bold red",
}


def status_text(word: str) -> Text:
    return Text(inert_line(word), style=STATUS_STYLE.get(word, ""))


def as_text(cell: Cell) -> Text:
    """A plain string stays plain: DataTable would read `[...]` in a detail
    as markup; and inert: a cell is one line of head's text at most."""
    return cell if isinstance(cell, Text) else Text(inert_line(cell), end="")


def same(shown: Cell, cell: Text) -> bool:
    """Whether a cell shows `cell` already: its words and its style (a
    Text equals another of the same words in any base style)."""
    return isinstance(shown, Text) and (shown.plain, shown.style, shown.spans) == (cell.plain, cell.style, cell.spans)


class KeyedTable(DataTable[Cell]):
    """A DataTable whose rows are synced from a mapping of key -> cells.

    Short of room, it leaves out its OPTIONAL columns, in their order, so
    that the columns it shows show whole (a column cut at the pane's edge
    read `verdic` or `$0.00002` for `$0.000029`); `give_way` may then
    narrow what is left (the branch names)."""

    COLUMNS: Sequence[tuple[str, str]] = ()  # (key, label): every column, in order
    OPTIONAL: Sequence[str] = ()  # keys of the columns left out first when the table is short of room
    shown_columns: Sequence[tuple[str, str]] = ()  # the columns on screen
    synced: Mapping[str, Sequence[Cell]] = {}  # the rows last synced: fitted again on a resize
    natural_width = 0  # columns the shown columns take, padding included

    def on_mount(self) -> None:
        self.shown_columns = self.COLUMNS
        self._add_columns({})

    def on_resize(self) -> None:
        """The room changed (a resize, the narrow layout): fit the rows again."""
        if self.OPTIONAL:
            self.sync(self.synced)

    def _add_columns(self, rows: Mapping[str, Sequence[Text]]) -> None:
        for (key, label), width in zip(self.shown_columns, self._widths(rows)):
            self.add_column(label, key=key, width=width)

    def sync(self, rows: Mapping[str, Sequence[Cell]]) -> None:
        """Make the table hold exactly `rows`, in their order.

        The same rows in columns of the same widths (a running check's
        time ticking on) are updated cell by cell; any other change
        rebuilds the table, columns included: DataTable widths only ever
        grow, so updating in place would size a column by whatever it once
        held and make the screen depend on timing. A rebuild clears and
        refills the table and moves the cursor back, once a second while a
        run is timed: a key pressed meanwhile waited for it."""
        self.synced = rows
        texts = self.fit({key: [as_text(cell) for cell in cells] for key, cells in rows.items()})
        shape = [str(k.value) for k in self.columns], [str(k.value) for k in self.rows]
        widths = [column.width for column in self.columns.values()]
        if shape != ([key for key, _ in self.shown_columns], list(texts)) or widths != self._widths(texts):
            self._rebuild(texts)
            return
        for key, cells in texts.items():
            for (column, _), cell in zip(self.shown_columns, cells):
                if not same(self.get_cell(key, column), cell):
                    self.update_cell(key, column, cell)

    def _widths(self, rows: Mapping[str, Sequence[Text]]) -> list[int]:
        """Each shown column's width: its label's or its widest cell's."""
        return [
            max([len(label), *(cells[i].cell_len for cells in rows.values() if i < len(cells))])
            for i, (_, label) in enumerate(self.shown_columns)
        ]

    def fit(self, rows: Mapping[str, Sequence[Text]]) -> dict[str, list[Text]]:
        """The rows as shown: OPTIONAL columns left out while the table
        would be wider than its room (unknown before the first layout:
        then all are shown), then `give_way` on what is over."""
        room = self.room(len(rows))
        kept = list(range(len(self.COLUMNS)))
        widths = [
            max([len(label), *(cells[i].cell_len for cells in rows.values() if i < len(cells))]) + 2 * self.cell_padding
            for i, (_, label) in enumerate(self.COLUMNS)
        ]
        for key in self.OPTIONAL:
            if room <= 0 or sum(widths[i] for i in kept) <= room:
                break
            kept.remove(next(i for i, (k, _) in enumerate(self.COLUMNS) if k == key))
        self.shown_columns = [self.COLUMNS[i] for i in kept]
        fitted = {key: [cells[i] for i in kept if i < len(cells)] for key, cells in rows.items()}
        self.natural_width = sum(widths[i] for i in kept)
        over = self.natural_width - room
        return self.give_way(fitted, over) if room > 0 and over > 0 else fitted

    def room(self, rows: int) -> int:
        """Columns the cells may take: the table's width less a scrollbar
        when the rows (and the header's row) overflow; 0 before the first layout."""
        room = self.content_region.width
        if room > 0 and rows + 1 > self.content_region.height:
            room -= self.styles.scrollbar_size_vertical
        return room

    def give_way(self, rows: dict[str, list[Text]], over: int) -> dict[str, list[Text]]:
        """Rows still `over` columns too wide once the optional columns are
        out: as they are (a table may narrow one of its columns)."""
        return rows

    def _rebuild(self, rows: Mapping[str, Sequence[Text]]) -> None:
        """Each column sized here from what it holds: DataTable measures
        new rows only when idle, and a frame drawn before that keeps the
        labels' widths (a screen that depends on timing)."""
        selected = self.selected_key
        self.clear(columns=True)
        self._add_columns(rows)
        for key, cells in rows.items():
            self.add_row(*cells, key=key)
        if selected is not None and selected in rows:
            self.move_cursor(row=list(rows).index(selected), animate=False)

    @property
    def selected_key(self) -> str | None:
        if not self.row_count:
            return None
        try:
            key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        except RowDoesNotExist:
            return None
        return None if key.value is None else str(key.value)
