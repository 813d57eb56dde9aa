"""Keyed tables: rows updated in place, so the cursor stays where the user put it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import RowDoesNotExist

from gatetui.inert import inert_line

Cell = str | Text
STATUS_STYLE = {
    "pass": "bold green", "FAIL": "bold red", "ERROR": "bold magenta", "REVIEW": "bold yellow",
    "running": "bold cyan", "queued": "cyan", "stale": "dim yellow", "skip": "dim",
    "cancelled": "dim", "waiting": "dim", "accepted": "green", "REJECTED": "bold red",
}


def status_text(word: str) -> Text:
    return Text(inert_line(word), style=STATUS_STYLE.get(word, ""))


def as_text(cell: Cell) -> Text:
    """A plain string stays plain: DataTable would read `[...]` in a detail
    as markup; and inert: a cell is one line of head's text at most."""
    return cell if isinstance(cell, Text) else Text(inert_line(cell), end="")


class KeyedTable(DataTable[Cell]):
    """A DataTable whose rows are synced from a mapping of key -> cells."""

    COLUMNS: Sequence[tuple[str, str]] = ()  # (key, label)

    def on_mount(self) -> None:
        self._add_columns({})

    def _add_columns(self, rows: Mapping[str, Sequence[Text]]) -> None:
        for i, (key, label) in enumerate(self.COLUMNS):
            width = max([len(label), *(cells[i].cell_len for cells in rows.values() if i < len(cells))])
            self.add_column(label, key=key, width=width)

    def sync(self, rows: Mapping[str, Sequence[Cell]]) -> None:
        """Make the table hold exactly `rows`, in their order.

        Any change rebuilds the table, columns included: DataTable widths
        only ever grow, so updating in place would size a column by
        whatever it once held and make the screen depend on timing. The
        tables hold a handful of rows, so a rebuild costs nothing."""
        texts = {key: [as_text(cell) for cell in cells] for key, cells in rows.items()}
        current = [str(k.value) for k in self.rows]
        columns = [str(k.value) for k in self.columns] == [key for key, _ in self.COLUMNS]  # some may come and go
        if columns and current == list(texts) and all(
                self.get_cell(key, column) == cell
                for key, cells in texts.items() for (column, _), cell in zip(self.COLUMNS, cells)):
            return
        self._rebuild(texts)

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
