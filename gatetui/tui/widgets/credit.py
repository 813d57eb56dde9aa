"""The credit table: what the run costs at Runtime's rates, and submits used."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from gatetui.gate.checks import CHECK_ORDER
from gatetui.gate.cost import Usage
from gatetui.supervisor import Run
from gatetui.tui.format import dollars
from gatetui.tui.widgets.tables import KeyedTable


class CostTable(KeyedTable):
    COLUMNS = (("what", ""), ("wall", "wall s"), ("cpu", "CPU-min"), ("gib", "GiB-min"), ("usd", "dollars"))


def _cells(name: str, usage: Usage) -> tuple[str, ...]:
    return (name, f"{usage.wall_seconds:.1f}", f"{usage.cpu_minutes:.3f}", f"{usage.gib_minutes:.3f}",
            dollars(usage.dollars))


class CreditPanel(Vertical):
    def compose(self) -> ComposeResult:
        yield CostTable(id="cost-table", cursor_type="none")
        yield Static(id="credit-note")

    def show(self, run: Run | None, since_start: Usage, submits: tuple[int, int] | None) -> None:
        rows = {}
        if run is not None:
            order = [c.value for c in CHECK_ORDER]
            per_check = sorted(run.cost.per_check.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99)
            rows = {k: _cells(k, v) for k, v in per_check}
            rows["run"] = _cells("this run", run.cost.total)
        rows["since"] = _cells("since start", since_start)
        self.query_one(CostTable).sync(rows)
        basis = run.cost.basis if run else "estimated at Runtime rates"
        used = f"; submits {submits[0]} of {submits[1]}" if submits else ""
        self.query_one("#credit-note", Static).update(f"{basis}{used}")
