"""Keyed tables: rows updated in place, so the cursor stays where the user put it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import RowDoesNotExist

Cell = str | Text
STATUS_STYLE = {
    "pass": "bold green", "FAIL": "bold red", "ERROR": "bold magenta", "REVIEW": "bold yellow",
    "running": "bold cyan", "queued": "cyan", "stale": "dim yellow", "skip": "dim",
    "cancelled": "dim", "waiting": "dim",
}


def status_text(word: str) -> Text:
    return Text(word, style=STATUS_STYLE.get(word, ""))


class KeyedTable(DataTable[Cell]):
    """A DataTable whose rows are synced from a mapping of key -> cells."""

    COLUMNS: Sequence[tuple[str, str]] = ()  # (key, label)

    def on_mount(self) -> None:
        self._add_columns()

    def _add_columns(self) -> None:
        for key, label in self.COLUMNS:
            self.add_column(label, key=key)

    def sync(self, rows: Mapping[str, Sequence[Cell]]) -> None:
        """Make the table hold exactly `rows`, in their order.

        Any change rebuilds the table, columns included: DataTable widths
        only ever grow, so updating in place would size a column by
        whatever it once held and make the screen depend on timing. The
        tables hold a handful of rows, so a rebuild costs nothing."""
        current = [str(k.value) for k in self.rows]
        if current == list(rows) and all(
                self.get_cell(key, column) == cell
                for key, cells in rows.items() for (column, _), cell in zip(self.COLUMNS, cells)):
            return
        self._rebuild(rows)

    def _rebuild(self, rows: Mapping[str, Sequence[Cell]]) -> None:
        selected = self.selected_key
        self.clear(columns=True)
        self._add_columns()
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
