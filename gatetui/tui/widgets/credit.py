"""The credit table: what the run costs at Runtime's rates, the total since
the app started, a monthly projection, and submits used."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from gatetui.gate.checks import CHECK_ORDER
from gatetui.gate.cost import Usage
from gatetui.inert import inert
from gatetui.supervise.runs import Run
from gatetui.tui.format import dollars
from gatetui.tui.widgets.tables import KeyedTable

DAY = 86400.0
MONTH_DAYS = 30


@dataclass(frozen=True)
class Projection:
    """30 days at the pace of the runs of the last 30 days (history included):
    their cost per day, times 30. The days counted run from the oldest of
    those runs to now, and are at least one: a burst of runs in the last
    hour counts as that day's work, not as a pace kept around the clock."""

    month: Usage
    runs: int
    days: float
    span: float = 0.0  # seconds from the oldest of those runs to now


def month_projection(runs: Iterable[Run], now: float) -> Projection | None:
    recent = [r for r in runs if r.started_at and 0 <= now - r.started_at <= MONTH_DAYS * DAY]
    if not recent:
        return None
    total = Usage()
    for run in recent:
        total = total + run.cost.total
    days = min(MONTH_DAYS, max(1.0, (now - min(r.started_at for r in recent)) / DAY))
    scale = MONTH_DAYS / days
    span = now - min(r.started_at for r in recent)
    return Projection(
        Usage(total.wall_seconds * scale, total.cpu_seconds * scale, total.gib_seconds * scale), len(recent), days, span
    )


class CostTable(KeyedTable):
    """Its panel takes the width the table needs, up to SHARE of the row it
    shares with the digests, which keep DIGESTS_LEAST columns; short of
    that (a 120-column screen), wall seconds leave first, then GiB-minutes:
    the dollars and the CPU they mostly come from show whole, never with a
    digit cut off (at 150 columns the dollars read $0.00002 for $0.000029)."""

    COLUMNS = (("what", ""), ("wall", "wall s"), ("cpu", "CPU-min"), ("gib", "GiB-min"), ("usd", "dollars"))
    OPTIONAL = ("wall", "gib")
    SHARE, DIGESTS_LEAST = 0.65, 34

    def room(self, rows: int) -> int:
        panel = self.parent
        row = panel.parent if panel is not None else None
        if not isinstance(panel, Widget) or not isinstance(row, Widget) or row.content_region.width <= 0:
            return 0
        width = row.content_region.width
        return min(int(width * self.SHARE), width - self.DIGESTS_LEAST) - panel.styles.gutter.width

    def fit(self, rows: Mapping[str, Sequence[Text]]) -> dict[str, list[Text]]:
        fitted = super().fit(rows)
        panel = self.parent
        if isinstance(panel, Widget) and self.room(len(rows)) > 0:
            width = self.natural_width + panel.styles.gutter.width
            if panel.styles.width is None or panel.styles.width.value != width:
                panel.styles.width = width
        return fitted


def _cells(name: str, usage: Usage, wall: bool = True) -> tuple[str, ...]:
    return (
        name,
        f"{usage.wall_seconds:.1f}" if wall else "",
        f"{usage.cpu_minutes:.3f}",
        f"{usage.gib_minutes:.3f}",
        dollars(usage.dollars),
    )


def projection_note(projection: Projection | None) -> str:
    if projection is None:
        return "per month*: no run yet to project from"
    runs = f"{projection.runs} run{'s' if projection.runs != 1 else ''}"
    if projection.span < DAY:  # the pace of a short burst is not kept around the clock
        return (
            f"* per month: the {runs} of the last {_span(projection.span)}, counted as one day's work, "
            f"x {MONTH_DAYS} days"
        )
    return f"* per month: the {runs} of the last {projection.days:.1f} days, per day x {MONTH_DAYS}"


def _span(seconds: float) -> str:
    for unit, size in (("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{max(seconds, 1):.0f} s"


class CreditPanel(Vertical):
    def compose(self) -> ComposeResult:
        yield CostTable(id="cost-table", cursor_type="none")
        yield Static(id="credit-note", markup=False)

    def show(
        self, run: Run | None, since_start: Usage, submits: tuple[int, int] | None, projection: Projection | None = None
    ) -> None:
        rows = {}
        if run is not None:
            order = [c.value for c in CHECK_ORDER]
            per_check = sorted(run.cost.per_check.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99)
            rows = {k: _cells(k, v) for k, v in per_check}
            rows["run"] = _cells("this run", run.cost.total)
            for check, usage in run.cost.saved.items():  # a kept dependency layer: not spent, said apart
                rows[f"saved-{check}"] = _cells(f"{check} saved (layer)", usage)
        rows["since"] = _cells("since start", since_start)
        if projection is not None:
            rows["month"] = _cells("per month*", projection.month, wall=False)
        self.query_one(CostTable).sync(rows)
        basis = run.cost.basis if run else "estimated at Runtime rates"
        used = f"; submits {submits[0]} of {submits[1]}" if submits else ""
        if run is not None and run.cost.account:
            used += "; account " + ", ".join(f"{k} ${v:,.2f}" for k, v in run.cost.account.items())
        self.query_one("#credit-note", Static).update(inert(f"{basis}{used}\n{projection_note(projection)}"))
