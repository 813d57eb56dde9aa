"""The check's output pane and the keyed tables, in a screen of their own:
what they show, and that what streams or ticks in leaves the person's place
(the log's scroll, the table's cursor) where it was."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.message import Message
from textual.widgets import DataTable

from gatetui.gate.checks import CheckId, Status
from gatetui.supervise.runs import LogBuffer, Run
from gatetui.tui.app import GatetuiApp
from gatetui.tui.widgets.checks import ChecksTable
from gatetui.tui.widgets.loglines import LogLines, Widths
from gatetui.tui.widgets.logview import LogView
from gatetui.tui.widgets.tables import KeyedTable
from tests.support.supervising import until


class Host(App[None]):
    """A log pane and a checks table, laid out as on the main screen, nothing else."""

    CSS_PATH = Path(inspect.getfile(GatetuiApp)).with_name("gatetui.tcss")

    def compose(self) -> ComposeResult:
        yield ChecksTable(id="checks", cursor_type="row")
        yield LogView(id="log")


def lines_of(n: int, start: int = 0) -> str:
    return "".join(f"line {i}\n" for i in range(start, start + n))


def streamed(run: Run, check: CheckId, text: str) -> None:
    run.log(check).append(check.value, text)


def shown(app: Host) -> list[str]:
    """The log's rows as drawn, blank rows left out."""
    log = app.query_one(LogLines)
    rows = [log.render_line(y).text.rstrip() for y in range(log.scrollable_content_region.height)]
    return [row for row in rows if row]


def test_widths_measure_each_line_once_and_a_dropped_wide_line_still_counts() -> None:
    buffer, widths = LogBuffer(cap=2), Widths()
    buffer.append("run 1", "a\n" + "x" * 30 + "\n")
    assert widths.of(buffer) == len("run 1 | ") + 30
    buffer.append("run 1", "b\nc\n")  # the wide line is dropped: its width is kept
    assert (list(buffer.lines), widths.of(buffer)) == (["run 1 | b", "run 1 | c"], len("run 1 | ") + 30)
    buffer.append("run 1", "\x1b" * 20 + "\n")  # drawn inert: each ESC takes four cells
    assert widths.of(buffer) == len("run 1 | ") + 80


@pytest.mark.asyncio
@pytest.mark.drives  # the Textual app
async def test_the_log_shows_each_checks_last_lines_and_switches_back_to_its_end() -> None:
    app = Host()
    run = Run("r", "agent/x", "h", status="running")
    streamed(run, CheckId.INSTALL, lines_of(500))
    streamed(run, CheckId.RUNS, lines_of(3))
    async with app.run_test(size=(60, 20)) as pilot:
        view = app.query_one(LogView)
        view.show(run, CheckId.INSTALL)
        await pilot.pause()
        assert shown(app)[-1] == "install | line 499"
        view.show(run, CheckId.RUNS)
        await pilot.pause()
        assert shown(app) == ["runs | line 0", "runs | line 1", "runs | line 2"]
        view.show(run, CheckId.INSTALL)
        await pilot.pause()
        log = app.query_one(LogLines)
        assert (shown(app)[-1], log.scroll_y, log.line_count) == ("install | line 499", log.max_scroll_y, 500)


@pytest.mark.asyncio
@pytest.mark.drives  # the Textual app
async def test_streamed_lines_are_drawn_at_the_next_redraw_and_a_person_scrolled_up_stays() -> None:
    app = Host()
    run = Run("r", "agent/x", "h", status="running")
    streamed(run, CheckId.INSTALL, lines_of(100))
    async with app.run_test(size=(60, 20)) as pilot:
        view, log = app.query_one(LogView), app.query_one(LogLines)
        view.show(run, CheckId.INSTALL)
        await pilot.pause()
        streamed(run, CheckId.INSTALL, lines_of(100, start=100))
        view.streamed(run, CheckId.INSTALL)
        await until(lambda: str(app.query_one("#log-title").render()) == "output of install: 200 lines")
        await pilot.pause()
        assert shown(app)[-1] == "install | line 199"
        log.scroll_to(y=10, animate=False, immediate=True)
        streamed(run, CheckId.INSTALL, lines_of(100, start=200))
        view.streamed(run, CheckId.INSTALL)
        await until(lambda: str(app.query_one("#log-title").render()) == "output of install: 300 lines")
        await pilot.pause()
        assert (log.scroll_y, shown(app)[0]) == (10, "install | line 10")


@pytest.mark.asyncio
@pytest.mark.drives  # the Textual app
async def test_a_ticking_time_updates_its_cell_and_leaves_the_cursor_unannounced() -> None:
    highlighted: list[int] = []

    def hook(message: Message) -> None:
        if isinstance(message, DataTable.RowHighlighted):
            highlighted.append(message.cursor_row)

    app = Host()
    run = Run("r", "agent/x", "h", status="running")
    row = run.checks[CheckId.INSTALL]
    row.status, row.started = Status.RUNNING, 100.0
    async with app.run_test(size=(100, 20), message_hook=hook) as pilot:
        table = app.query_one(ChecksTable)
        table.show(run, 101.0)
        table.focus()
        await pilot.press("down", "down")
        await pilot.pause()
        highlighted.clear()
        table.show(run, 102.0)  # the same widths: "1.0s" -> "2.0s"
        await pilot.pause()
        assert (table.get_cell("install", "time"), table.cursor_row, highlighted) == (Text("2.0s"), 2, [])


@pytest.mark.asyncio
@pytest.mark.drives  # the Textual app
async def test_a_cell_that_changes_only_its_style_is_redrawn() -> None:
    class One(KeyedTable):
        COLUMNS = (("x", "x"),)

    class Tables(App[None]):
        def compose(self) -> ComposeResult:
            yield One()

    app = Tables()
    async with app.run_test() as pilot:
        table = app.query_one(One)
        table.sync({"a": [Text("pass", style="dim")]})
        table.sync({"a": [Text("pass", style="green")]})
        await pilot.pause()
        assert str(table.get_cell("a", "x").style) == "green"
