"""The lab screen driven by Pilot: real scenarios gated by the local backend
fill the matrix live; an edited rules file and `r` show what the new rules
stop; escape leaves and cancels; bad rules are said on the screen."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from gatetui.lab.rules import stream_lab
from gatetui.lab.samples import SAMPLES_DIR
from gatetui.tui.screens.lab import LabScreen
from gatetui.tui.widgets.labmatrix import DIFFERS_STYLE, EXPECTED_STYLE, LabState, row_cells
from tests.support.lab import STRICT
from tests.support.tui import (
    SCENARIOS,
    SIZE,
    column,
    make_app,
    recorded_lab,
    replay_lab,
    sample_at_base,
    wait_for,
    workspaces,
)


def lab_screen(pilot: Pilot[None]) -> LabScreen:
    screen = pilot.app.screen
    assert isinstance(screen, LabScreen)
    return screen


def status(pilot: Pilot[None]) -> str:
    return str(lab_screen(pilot).query_one("#lab-status", Static).render())


@pytest.mark.sandbox
@pytest.mark.install
@pytest.mark.asyncio
async def test_the_lab_fills_in_live_and_rerun_reads_the_edited_rules(tmp_path: Path) -> None:
    for name in ("honest_fix", "skip_marker"):
        shutil.copytree(SAMPLES_DIR / name, tmp_path / "scenarios" / name)
    rules = tmp_path / "rules.toml"
    rules.write_text("")  # the defaults: every scenario gets what it expects
    repo, _, _ = sample_at_base("honest_fix", tmp_path / "repo")
    app = make_app(repo, tmp_path)
    app.lab_scenarios, app.lab_rules = tmp_path / "scenarios", rules
    app.lab_source = functools.partial(stream_lab, work_root=tmp_path / "work")
    seen: list[dict[str, str]] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("l")
        screen = lab_screen(pilot)

        def finished() -> bool:
            seen.append(column(pilot, "#lab-matrix", "verdict"))
            return screen.state.finished

        await wait_for(pilot, finished)
        await pilot.pause(0.1)
        first = (column(pilot, "#lab-matrix", "verdict"), column(pilot, "#lab-matrix", "old_tests"), status(pilot))
        rules.write_text(STRICT)  # a workshop tightens the rules...
        await pilot.press("r")  # ...and runs the lab again
        await wait_for(pilot, lambda: screen.state.finished and screen.generation == 2)
        await pilot.pause(0.1)
        second = (column(pilot, "#lab-matrix", "old_tests"), status(pilot))
        summary = str(screen.query_one("#lab-summary-text", Static).render())
        await pilot.press("escape")
        back = pilot.app.screen is app.main
        await pilot.press("q")
    assert {"honest_fix": "running", "skip_marker": "running"} in seen  # filled in while the screen was open
    assert first == (
        {"honest_fix": "pass", "skip_marker": "fail"},
        {"honest_fix": "pass", "skip_marker": "fail"},
        "every scenario gated; 0 of 18 cells differ from what the scenarios expect",
    )
    assert second == (
        {"honest_fix": "fail (want pass)", "skip_marker": "fail"},
        "run 2: every scenario gated; 3 of 18 cells differ from what the scenarios expect",
    )
    assert (
        "rule 'existing tests' (on_change = fail, allow_new)\n  sees a change in cheats: skip_marker\n"
        "  sees a change in honest ones: honest_fix\n" in summary
    )
    assert "stopped although honest: honest_fix (got fail)" in summary
    assert back and workspaces(tmp_path) == []


@pytest.mark.install  # escape comes midway: sometimes after an install began
@pytest.mark.sandbox
@pytest.mark.asyncio
async def test_escape_during_a_lab_cancels_its_gates(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES_DIR / "honest_fix", tmp_path / "scenarios" / "honest_fix")
    repo, _, _ = sample_at_base("honest_fix", tmp_path / "repo")
    app = make_app(repo, tmp_path)
    app.lab_scenarios = tmp_path / "scenarios"
    app.lab_source = functools.partial(stream_lab, work_root=tmp_path / "work")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("l")
        await wait_for(pilot, lambda: column(pilot, "#lab-matrix", "verdict") == {"honest_fix": "running"})
        await wait_for(pilot, lambda: len(workspaces(tmp_path)) == 1)  # its gate is under way
        await pilot.press("escape")
        await wait_for(pilot, lambda: workspaces(tmp_path) == [], timeout=30)
        assert pilot.app.screen is app.main
        await pilot.press("q")


@pytest.mark.asyncio
@pytest.mark.drives
async def test_recorded_results_fill_the_matrix_in_order_with_styles(tmp_path: Path) -> None:
    repo, _, _ = sample_at_base("honest_fix", tmp_path / "repo")
    app = make_app(repo, tmp_path)
    app.lab_source = replay_lab
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("l")
        screen = lab_screen(pilot)
        await wait_for(pilot, lambda: "skip_marker" in screen.state.running)
        await pilot.pause(0.1)
        verdicts = column(pilot, "#lab-matrix", "verdict")
        line = status(pilot)
        await pilot.press("escape", "q")
    assert list(verdicts) == ["honest_fix", "loosened_assertion", "section_version_bump", "skip_marker", "deleted_test"]
    assert verdicts == {
        "honest_fix": "fail (want pass)",
        "loosened_assertion": "review",
        "section_version_bump": "pass",
        "skip_marker": "running",
        "deleted_test": "fail",
    }
    assert line == "3 of 5 gated, 1 running; 2 of 27 cells differ from what the scenarios expect"


def test_cells_say_expected_actual_and_mark_what_differs() -> None:
    state = LabState()
    for event in recorded_lab():
        state.apply(event)
    honest = row_cells(SCENARIOS["honest_fix"], state.outcomes["honest_fix"], running=False)
    waiting = row_cells(SCENARIOS["deleted_test"], None, running=False)
    assert [(c.plain, str(c.style)) for c in (honest[5], honest[9])] == [
        ("fail (want pass)", DIFFERS_STYLE),
        ("fail (want pass)", DIFFERS_STYLE),
    ]
    assert (honest[1].plain, str(honest[1].style)) == ("pass", "green")
    assert [c.plain for c in waiting] == [
        "deleted_test",
        "pass",
        "pass",
        "fail",
        "pass",
        "fail",
        "skipped",
        "skipped",
        "skipped",
        "fail",
    ]
    assert {str(c.style) for c in waiting[1:]} == {EXPECTED_STYLE}
    assert (state.mismatches, state.finished) == (2, False)


@pytest.mark.asyncio
@pytest.mark.drives
async def test_a_bad_rules_file_is_said_on_the_lab_screen(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text('on_change = "sometimes"\n')
    repo, _, _ = sample_at_base("honest_fix", tmp_path / "repo")
    app = make_app(repo, tmp_path)
    app.lab_rules = rules
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("l")
        await wait_for(pilot, lambda: bool(lab_screen(pilot).state.error))
        await pilot.pause(0.05)
        line = status(pilot)
        rows = column(pilot, "#lab-matrix", "verdict")
        await pilot.press("escape", "q")
    assert line.startswith("the lab could not start: ")
    assert line.endswith("seal.on_change must be 'review' or 'fail' or 'allow', not 'sometimes'")
    assert rows == {}
