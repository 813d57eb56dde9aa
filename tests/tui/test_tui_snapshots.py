"""What the screen shows, as SVG snapshots: the main screen in each verdict
state and the review screen. Deterministic: sample repos (fixed shas), a
fixed clock and key, runs read from history or fed as recorded events."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.cost import Cost, Usage
from gatetui.gate.events import (
    CheckFinished,
    CheckProgress,
    CheckStarted,
    CostUpdated,
    DigestsComputed,
    OutputChunk,
    RunStarted,
)
from gatetui.gate.sealing.digests import Digests
from gatetui.lab.demo import move_branch
from gatetui.supervise.ref_watcher import RefWatcher
from gatetui.supervise.runs import Run
from gatetui.supervise.store import Store
from gatetui.supervise.supervisor import Supervisor
from gatetui.tui.app import GatetuiApp
from gatetui.tui.widgets.labmatrix import LabState
from tests.support.supervising import FakeBackend, until
from tests.support.tui import NOW, SIZE, commit_on_top, record, replay_lab, sample_at_base

pytestmark = pytest.mark.drives  # each drives the Textual app


@pytest.fixture(autouse=True)
def pip_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    """The install commands as the snapshots hold them, pip's: uv's would
    name the uv binary's path on this machine, and the output pane wraps
    by length."""
    monkeypatch.setenv("GATETUI_UV", "off")


def app_on(tmp: Path, name: str, stored: bool = True, moved: bool = False) -> GatetuiApp:
    repo, head, base = sample_at_base(name, tmp / name)
    store = Store.open(tmp / "state")
    store.write_atomic("key", b"k" * 32)  # a fixed key: fixed seals
    sealed = ("tests/test_leap.py",) if name != "honest_fix" else ()
    if stored:
        store.save_run(repo, record(name, head, base, sealed))
    move_branch(
        repo, f"agent/{name}", commit_on_top(repo, head, "NOTES.md", "more\n", when=int(NOW)) if moved else head
    )
    supervisor = Supervisor(repo, FakeBackend(released=False), store, clock=lambda: NOW, watcher=RefWatcher(repo))
    return GatetuiApp(supervisor, clock=lambda: NOW)


def loaded(extra: Callable[[GatetuiApp], None] | None = None) -> Callable[[Pilot[None]], Awaitable[None]]:
    async def run_before(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, GatetuiApp)
        while not app.supervisor.branches:
            await pilot.pause(0.02)
        if extra is not None:
            extra(app)
        await pilot.pause(0.1)

    return run_before


def feed_running(app: GatetuiApp) -> None:
    """A run under way, from recorded events: diff checks answered, install streaming."""
    sup = app.supervisor
    branch = next(iter(sup.branches.values()))
    run = Run("run-live", branch.name, branch.head, started_at=NOW - 7, backend="local")
    branch.runs.append(run)
    run_started = RunStarted(
        "run-live", str(sup.repo), "main", branch.name, "0" * 40, branch.head, "local", "python", tuple(CheckId)
    )
    sup.clock = lambda: NOW - 7
    for event in (
        run_started,
        DigestsComputed(Digests("0" * 40, branch.head, "a1" * 32, "a1" * 32)),
        CheckStarted(CheckId.TESTS_KEPT),
        CheckProgress(CheckId.TESTS_KEPT, "diff: 0 removed, 1 added; waiting for the runs"),
        CheckStarted(CheckId.NO_NEW_SKIPS),
        CheckFinished(CheckResult(CheckId.NO_NEW_SKIPS, Status.PASS, "", 0.0)),
        CheckStarted(CheckId.HIDDEN),
        CheckFinished(CheckResult(CheckId.HIDDEN, Status.SKIPPED, "not configured", 0.0)),
        CheckStarted(CheckId.INSTALL),
    ):
        sup.apply(run, event)
    sup.clock = lambda: NOW
    for i in range(30):
        sup.apply(run, OutputChunk(CheckId.INSTALL, "install", f"Collecting package-{i} (from calendarlib)\n"))
    sup.apply(run, CostUpdated(Cost({"install": Usage(7.0, 3.0, 0.1)})))


def cancel_newest(app: GatetuiApp) -> None:
    for name in list(app.supervisor.branches):
        app.supervisor.cancel(name)


@pytest.mark.parametrize("name", ["honest_fix", "skip_marker", "loosened_assertion"])
def test_main_screen_with_a_verdict(snap_compare: Any, tmp_path: Path, name: str) -> None:
    assert snap_compare(app_on(tmp_path, name), terminal_size=SIZE, run_before=loaded())


def test_main_screen_while_a_run_streams(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(app_on(tmp_path, "skip_marker"), terminal_size=SIZE, run_before=loaded(feed_running))


def test_main_screen_with_a_stale_verdict(snap_compare: Any, tmp_path: Path) -> None:
    """The newer head's run is cancelled once it reached the install (its diff
    checks answered), so the screen shows one state, whatever the timing."""
    app = app_on(tmp_path, "honest_fix", moved=True)

    async def stale(pilot: Pilot[None]) -> None:
        await loaded()(pilot)
        backend = app.supervisor.backend
        assert isinstance(backend, FakeBackend)
        await until(lambda: backend.opened == 1)
        cancel_newest(app)
        await until(lambda: backend.closed == 1)
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=SIZE, run_before=stale)


def test_main_screen_empty(snap_compare: Any, tmp_path: Path) -> None:
    app = app_on(tmp_path, "honest_fix", stored=False)

    async def no_branch(pilot: Pilot[None]) -> None:
        await pilot.pause(0.2)

    app.supervisor.pattern = "nobody/*"
    app.supervisor.watcher = RefWatcher(app.supervisor.repo, "nobody/*")
    assert snap_compare(app, terminal_size=SIZE, run_before=no_branch)


def test_review_screen(snap_compare: Any, tmp_path: Path) -> None:
    async def review(pilot: Pilot[None]) -> None:
        await loaded()(pilot)
        await pilot.press("v")
        await pilot.pause(0.1)

    assert snap_compare(app_on(tmp_path, "loosened_assertion"), terminal_size=SIZE, run_before=review)


def test_review_screen_shows_each_surviving_mutant_under_its_line(snap_compare: Any, tmp_path: Path) -> None:
    async def review(pilot: Pilot[None]) -> None:
        await loaded()(pilot)
        await pilot.press("v")
        await pilot.pause(0.1)

    assert snap_compare(app_on(tmp_path, "toothless_test"), terminal_size=SIZE, run_before=review)


# --- the rules lab, from recorded results ---------------------------------------


def test_lab_screen(snap_compare: Any, tmp_path: Path) -> None:
    app = app_on(tmp_path, "honest_fix")
    app.lab_scenarios, app.lab_source = Path("sample_repos"), replay_lab

    async def lab(pilot: Pilot[None]) -> None:
        await loaded()(pilot)
        await pilot.press("l")
        await until(lambda: "skip_marker" in getattr(app.screen, "state", LabState()).running)
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=SIZE, run_before=lab)


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
def test_main_screen_at_the_smallest_and_a_large_terminal(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    """80x24 stacks the panes (branches and runs side by side on top, then
    the checks and the output); 200x50 shows everything."""
    assert snap_compare(app_on(tmp_path, "skip_marker"), terminal_size=size, run_before=loaded())


def test_a_checks_full_detail_opens_with_enter_at_80x24(snap_compare: Any, tmp_path: Path) -> None:
    from gatetui.tui.widgets.checks import ChecksTable

    async def open_detail(pilot: Pilot[None]) -> None:
        await loaded()(pilot)
        pilot.app.screen.query_one(ChecksTable).focus()
        await pilot.press("down", "down", "down", "enter")  # no_new_skips, its marker and file
        await pilot.pause(0.1)

    assert snap_compare(app_on(tmp_path, "skip_marker"), terminal_size=(80, 24), run_before=open_detail)


def test_the_digest_and_credit_panes_show_on_p_at_80x24(snap_compare: Any, tmp_path: Path) -> None:
    async def panes(pilot: Pilot[None]) -> None:
        await loaded()(pilot)
        await pilot.press("p")
        await pilot.pause(0.1)

    assert snap_compare(app_on(tmp_path, "skip_marker"), terminal_size=(80, 24), run_before=panes)
