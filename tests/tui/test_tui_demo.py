"""`gatetui demo` as the room sees it: the pane follows a run
with something to show, never a queued one; each scenario's notice sits
beside its verdict; no column of the branch list is cut at 120 columns.
The app is built as `gatetui demo` builds it (`launch.demo_app`), over the
workshop repository, with a scripted backend (no sandbox)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dulwich.repo import Repo
from textual.pilot import Pilot
from textual.widgets import DataTable

from gatetui.lab.demo import Workshop, move_branch, write_workshop
from gatetui.supervise.ref_watcher import RefWatcher
from gatetui.supervise.store import Store
from gatetui.supervise.supervisor import Supervisor
from gatetui.tui.app import GatetuiApp
from gatetui.tui.format import STATUS_WORD, VERDICT_WORD
from gatetui.tui.launch import demo_app
from gatetui.tui.widgets.notice import ScenarioNotice
from tests.support.supervising import FakeBackend, until
from tests.support.tui import NOW, column, record, wait_for

pytestmark = pytest.mark.drives  # each drives the Textual app

KEPT = ("honest_fix", "loosened_assertion", "skip_marker")  # judged before the screen opens, newest last


def screen_text(pilot: Pilot[None]) -> str:
    """What the terminal would show, row by row, as text."""
    return "\n".join(strip.text for strip in pilot.app.screen._compositor.render_strips())


def rows_cut(pilot: Pilot[None], table_id: str = "#branches") -> list[str]:
    """Each row of a table, on screen, that is not drawn whole: every column
    the table holds, each cell padded to its column (a cut verdict read
    `verdic`, `runnin`, `at bas`; a cut dollar figure lost its last digits)."""
    table = pilot.app.screen.query_one(table_id, DataTable)
    lines = screen_text(pilot).split("\n")
    cut = []
    for row in table.rows:
        cells = [str(table.get_cell(row, column.key)) for column in table.columns.values()]
        whole = "".join(f" {cell:<{column.width}} " for cell, column in zip(cells, table.columns.values()))
        if any(f" {cells[0]} " in line for line in lines) and not any(whole in line for line in lines):
            cut.append(whole)
    return cut


def columns_of(pilot: Pilot[None], table_id: str) -> list[str]:
    return [str(key.value) for key in pilot.app.screen.query_one(table_id, DataTable).columns]


@pytest.mark.asyncio
async def test_the_pane_follows_the_runs_gating_then_a_finished_one_with_its_notice(tmp_path: Path) -> None:
    workshop = write_workshop(tmp_path / "workshop")
    three = Workshop(workshop.repo, workshop.moves[:3], workshop.stories, workshop.expects)
    backend = FakeBackend(released=False)  # each gate holds its slot until released
    sup = Supervisor(
        workshop.repo, backend, Store.open(tmp_path / "state"), watcher=RefWatcher(workshop.repo, step_ms=20)
    )
    app = demo_app(three, sup, interval=0.0, first_after=0.0)
    first, second, third = (branch for branch, _ in three.moves)
    async with app.run_test(size=(120, 40)) as pilot:

        def gating() -> list[str]:
            return [b for b in (first, second) if (r := sup.run(b)) is not None and r.status == "running"]

        await wait_for(pilot, lambda: len(gating()) == 2 and app.main.branch_name in (first, second), 30)
        assert app.main.run is not None and app.main.run.status == "running"
        assert sup.run(third) is None  # paced: it waits at its base for a slot, never `queued`
        assert "queued" not in column(pilot, "#branches", "verdict").values()
        assert rows_cut(pilot) == []
        backend.release.set()

        def ended() -> bool:
            return all((r := sup.run(b)) is not None and not r.in_progress for b in (first, second, third))

        await wait_for(pilot, ended, 60)
        await wait_for(pilot, lambda: app.main.run is not None and not app.main.run.in_progress, 30)
        run, shown = app.main.run, app.main.branch_name
        assert shown in (first, second, third) and run is sup.run(shown)  # the pane: a branch's newest run
        assert column(pilot, "#checks", "status") == {c.value: STATUS_WORD[r.status] for c, r in run.checks.items()}
        assert all(r.status.final for r in run.checks.values())
        notice = app.main.query_one(ScenarioNotice)
        assert notice.display and str(notice.render()) == (
            f"scenario (expects {workshop.expects[shown]}, "
            f"{'as the gate said' if workshop.expects[shown] == run.status else f'the gate said {run.status}'}): "
            f"{workshop.stories[shown]}"
        )
        await pilot.pause(0.1)
        assert rows_cut(pilot) == []
        assert {column(pilot, "#branches", "verdict")[b] for b in (first, second, third)} <= set(VERDICT_WORD.values())
        await pilot.press("q")


def judged_workshop(tmp: Path) -> GatetuiApp:
    """The workshop as it stands part way: three branches judged (from the
    store's history, fixed shas and clock), the rest at their bases."""
    workshop = write_workshop(tmp / "workshop")
    store = Store.open(tmp / "state")
    store.write_atomic("key", b"k" * 32)  # a fixed key: fixed seals
    with Repo(str(workshop.repo)) as git:
        base = git.refs[b"refs/heads/main"].decode()
    moves = dict(workshop.moves)
    for age, name in enumerate(reversed(KEPT)):
        head = moves[f"agent/{name}"]
        sealed = ("tests/test_leap.py",) if name != "honest_fix" else ()
        store.save_run(workshop.repo, {**record(name, head, base, sealed), "finished_at": NOW - 60 * (age + 1)})
        move_branch(workshop.repo, f"agent/{name}", head)
    sup = Supervisor(
        workshop.repo, FakeBackend(released=False), store, clock=lambda: NOW, watcher=RefWatcher(workshop.repo)
    )
    return demo_app(
        Workshop(workshop.repo, [], workshop.stories, workshop.expects), sup, 0.0, first_after=0.0, clock=lambda: NOW
    )


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_the_demo_screen_with_a_notice(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """The newest verdict (skip_marker's FAIL) on screen with its scenario's
    notice above its checks; the branch names give way to the other columns."""

    async def judged(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, GatetuiApp)
        await until(lambda: app.main.branch_name == "agent/skip_marker" and app.main.run is not None)
        await until(lambda: app.main.query_one(ScenarioNotice).display)
        await pilot.pause(0.1)
        if size == (120, 40):  # what is shown is shown whole
            assert rows_cut(pilot) == [] and "verdict" in columns_of(pilot, "#branches")
            assert rows_cut(pilot, "#cost-table") == [] and {"cpu", "usd"} <= set(columns_of(pilot, "#cost-table"))

    assert snap_compare(judged_workshop(tmp_path), terminal_size=size, run_before=judged)
