"""Head's text in the TUI: shown as text in every pane and dialog, never
read as markup, never drawn raw. A run whose branch name, check details,
test ids, notes, file names, changed code and test output carry escape
sequences, bidi controls, zero-width characters and Textual markup
(`[@click=...]`, `[bold]`, `[link=...]`), read from history and fed as the
supervisor's events: the screen shows each literally (escaped), and
clicking where a markup action would sit does nothing."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from dulwich.repo import Repo
from rich.cells import cell_len
from textual.pilot import Pilot
from textual.widgets import DataTable

from gatetui.gate.checks import CheckId
from gatetui.gate.cost import Cost, Usage
from gatetui.gate.events import OutputChunk
from gatetui.gate.sealing.digests import Digests
from gatetui.lab.rules import LabEvent, LabPlanned, Outcome, ScenarioStarted
from gatetui.supervise import events
from gatetui.supervise.ref_watcher import RefWatcher
from gatetui.supervise.store import Store
from gatetui.supervise.supervisor import Supervisor
from gatetui.tui.app import GatetuiApp
from gatetui.tui.screens.dialogs import CheckDetailScreen, ErrorScreen
from gatetui.tui.screens.lab import LabScreen
from gatetui.tui.screens.review import ReviewScreen
from tests.support.hostile_text import (
    BIDI_NAME,
    BIDI_NAME_SHOWN,
    CLIPBOARD,
    CLIPBOARD_SHOWN,
    FORGED_PASS,
    FORGED_PASS_SHOWN,
    MARKUP,
    MARKUPS,
    REDRAW,
    REDRAW_SHOWN,
    unsafe_in,
)
from tests.support.supervising import FakeBackend, until
from tests.support.tui import SCENARIOS, SIZE, commit_on_top, sample_at_base

pytestmark = [pytest.mark.asyncio, pytest.mark.drives]  # each drives the app

NOW = 1_767_300_000.0
BRANCH = "agent/\u202exif\u0085\u200b\u009b2J-fix"  # no ASCII control nor `[` passes git's ref rules
BRANCH_SHOWN = "agent/\\u202exif\\x85\\u200b\\x9b2J-fix"
QUIT = MARKUPS[0]
DECIDE = "[@click=screen.decide('accepted')]accept[/]"  # in the review, this span would decide it
FLAGGED = f"+ @pytest.mark.skip  # {FORGED_PASS} {QUIT} at tests/test_leap.py:19"
FLAGGED_SHOWN = f"+ @pytest.mark.skip  # {FORGED_PASS_SHOWN} {QUIT} at tests/test_leap.py:19"
OLD_TESTS = (
    f"tests/test_leap.py::test_leap_day-{DECIDE} fails under base's tests; sealed files changed at head: evil.py"
)
ODD_PATH = f"tests/{MARKUP} {BIDI_NAME}.py"
ODD_PATH_SHOWN = f"tests/{MARKUP} {BIDI_NAME_SHOWN}.py"
CODE = f"def test_evil():\n    assert True  # {FORGED_PASS}\n    # {DECIDE}\n    # {REDRAW} {BIDI_NAME}\n"


def hostile_record(head: str, base: str) -> dict[str, Any]:
    details = {
        CheckId.NO_NEW_SKIPS: ("fail", FLAGGED),
        CheckId.OLD_TESTS: ("fail", OLD_TESTS),
        CheckId.HIDDEN: ("skipped", f"not configured {MARKUP}"),
    }
    checks = [
        {
            "id": c.value,
            "title": c.title,
            "status": details.get(c, ("pass", ""))[0],
            "ok": c not in details,
            "detail": details.get(c, ("pass", ""))[1],
            "seconds": 0.1,
        }
        for c in CheckId
    ]
    digests = Digests(base, head, "a1" * 32, "b2" * 32, ("evil.py", ODD_PATH), "c3" * 32, ("pyproject.toml",))
    return {
        "run_id": "run-hostile",
        "branch": BRANCH,
        "head": head,
        "base": base,
        "verdict": "fail",
        "backend": "local",
        "checks": checks,
        "digests": digests.to_json(),
        "cost": Cost({"install": Usage(1.0, 1.0, 0.1)}).to_json(),
        "seconds": 3.0,
        "finished_at": NOW - 60,
        "notes": [f"a note {QUIT} {FORGED_PASS}{REDRAW}"],
    }


def hostile_app(tmp: Path) -> GatetuiApp:
    """The loosened_assertion sample, its agent branch renamed to BRANCH and
    moved to a commit adding `evil.py`; the run in history, its install log
    holding the tests' output."""
    repo, head, base = sample_at_base("loosened_assertion", tmp / "repo")
    evil = commit_on_top(repo, head, "evil.py", CODE, when=int(NOW))
    with Repo(str(repo)) as git:
        del git.refs[b"refs/heads/agent/loosened_assertion"]
        git.refs[b"refs/heads/" + BRANCH.encode()] = evil.encode()
    store = Store.open(tmp / "state")
    store.save_run(repo, hostile_record(evil, base))
    log = store.open_log(repo, "run-hostile", "install")
    log.write(f"Collecting {BIDI_NAME}\n{CLIPBOARD}\n{MARKUP}\n{REDRAW}\n")
    log.close()
    supervisor = Supervisor(repo, FakeBackend(released=False), store, clock=lambda: NOW, watcher=RefWatcher(repo))
    return GatetuiApp(supervisor, clock=lambda: NOW)


def screen_text(pilot: Pilot[None]) -> str:
    """What the terminal would show, row by row, as text."""
    return "\n".join(strip.text for strip in pilot.app.screen._compositor.render_strips())


async def loaded(pilot: Pilot[None]) -> GatetuiApp:
    app = pilot.app
    assert isinstance(app, GatetuiApp)
    await until(lambda: BRANCH in app.supervisor.branches and app.supervisor.branches[BRANCH].latest is not None)
    await pilot.pause(0.1)
    return app


async def click_on(pilot: Pilot[None], words: str) -> None:
    """Click the first cell of `words` where the screen shows them."""
    for y, row in enumerate(screen_text(pilot).split("\n")):
        if words in row:
            await pilot.click(offset=(cell_len(row[: row.index(words)]), y))
            await pilot.pause(0.1)
            return
    raise AssertionError(f"{words!r} is not on the screen")


def assert_inert(shown: str, *literal: str) -> None:
    assert unsafe_in(shown) == []
    for text in literal:
        assert text in shown, f"{text!r} not shown literally"


async def test_the_main_screen_shows_heads_text_as_text_and_no_action_fires(tmp_path: Path) -> None:
    app = hostile_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        shown = screen_text(pilot)
        assert_inert(
            shown,
            f"{BRANCH_SHOWN}  ",
            f"{BRANCH_SHOWN} at ",  # the branch list, the run's title
            f"note: a note {QUIT} {FORGED_PASS_SHOWN[:30]}",
            f"pass\\x1b[8m{REDRAW_SHOWN}",
            "0.1s  " + FLAGGED_SHOWN[:36],
            f"0.1s  not configured {QUIT}",  # the checks' details
            f"install | Collecting {BIDI_NAME_SHOWN}",
            f"install | {CLIPBOARD_SHOWN}",  # the install's output
            f"install | {MARKUP}",
            "install | pass\\x08\\x08\\x08\\x08pass",  # (a CR splits a log line)
            "changed: evil.py,",
            f"tests/{QUIT}",
            f"{BIDI_NAME_SHOWN}.py",
        )  # the digests: sealed names
        await click_on(pilot, QUIT)  # where a markup button would sit
        assert app.return_code is None and app.screen is app.main


async def test_a_checks_detail_dialog_shows_it_as_text(tmp_path: Path) -> None:
    app = hostile_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        table = app.screen.query_one("#checks", DataTable)
        table.focus()
        table.move_cursor(row=table.get_row_index("no_new_skips"))
        await pilot.press("enter")
        await until(lambda: isinstance(app.screen, CheckDetailScreen))
        await pilot.pause(0.1)
        assert_inert(
            screen_text(pilot),
            "nothing new skipped or focused: fail",
            f"+ @pytest.mark.skip  # {FORGED_PASS_SHOWN}",
            f"{QUIT} at tests/test_leap.py:19",
        )
        await click_on(pilot, QUIT)
        assert app.return_code is None


async def test_the_review_shows_heads_text_as_text_and_a_click_decides_nothing(tmp_path: Path) -> None:
    app = hostile_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("v")
        await until(lambda: isinstance(app.screen, ReviewScreen))
        await pilot.pause(0.1)
        shown = screen_text(pilot)
        assert_inert(
            shown,
            f"review {BRANCH_SHOWN} at ",
            f"test_leap_day-{DECIDE} fails under base's tests",
            f"# {FORGED_PASS_SHOWN[:40]}",
            f"# {DECIDE}",
            f"pass\\x08\\x08\\x08\\x08pass {BIDI_NAME_SHOWN}",
            ODD_PATH_SHOWN,
        )  # evil.py's lines, a sealed file's name
        await click_on(pilot, "accept[/]")  # on the heading's reason: a markup span there decides the review
        run = app.supervisor.branches[BRANCH].latest
        assert run is not None and run.review == "" and "undecided: a accept, x reject" in screen_text(pilot)


async def test_notifications_and_error_dialogs_show_heads_text_as_text(tmp_path: Path) -> None:
    app = hostile_app(tmp_path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:  # run_test hides toasts unless asked
        await loaded(pilot)
        app.relay(events.EscalationRaised(BRANCH, f"{QUIT}{FORGED_PASS}"))  # the supervisor's events, as it sends them
        app.backend_said(f"{MARKUPS[1]}{CLIPBOARD}")  # a backend's news
        app.follow_demo(BRANCH, f"{MARKUPS[2]}{REDRAW}")  # the demo's story of a branch
        await pilot.press("g")  # the submits given back: a notification naming the branch
        await pilot.pause(0.2)
        shown = screen_text(pilot)
        assert_inert(
            shown,
            f"{QUIT}\\x1b[2K",
            MARKUPS[1] + CLIPBOARD_SHOWN[:30],  # toasts wrap at about 57
            MARKUPS[2] + REDRAW_SHOWN[:12],
            f"{BRANCH_SHOWN} has its 3 submits",
        )
        await click_on(pilot, QUIT)
        assert app.return_code is None
        app.relay(events.RunFailed(BRANCH, "run-x", f"the gate could not run: {QUIT} {CLIPBOARD}"))
        await until(lambda: isinstance(app.screen, ErrorScreen))
        await pilot.pause(0.1)
        assert_inert(
            screen_text(pilot),
            f"the gate could not run on {BRANCH_SHOWN}",
            f"the gate could not run: {QUIT}",
            CLIPBOARD_SHOWN,
        )
        await click_on(pilot, f"{QUIT} ")
        assert app.return_code is None


async def test_the_copied_verdict_block_is_inert(tmp_path: Path) -> None:
    app = hostile_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("y")
        await pilot.pause(0.1)
        assert app.clipboard.splitlines()[3] == f"FAIL nothing new skipped or focused: {FLAGGED_SHOWN}"
        assert unsafe_in(app.clipboard) == []
        saved = next((tmp_path / "state").rglob("run-hostile.txt"))
        assert saved.read_text() == app.clipboard + "\n"


async def hostile_lab(folder: Path, seal: object) -> AsyncIterator[LabEvent]:
    """A lab over scenarios named by whoever wrote the folder, one whose gate could not run."""
    one = dataclasses.replace(SCENARIOS["honest_fix"], name=f"{QUIT}{BIDI_NAME}")
    two = dataclasses.replace(SCENARIOS["skip_marker"], name="plain")
    yield LabPlanned((one, two))
    yield ScenarioStarted(two.name)
    yield Outcome(one, {c: "error" for c in ("install", "verdict")}, (), f"{MARKUPS[1]} {FORGED_PASS}")


async def test_the_rules_lab_shows_scenario_names_and_errors_as_text(tmp_path: Path) -> None:
    app = hostile_app(tmp_path)
    app.lab_scenarios, app.lab_source = tmp_path / f"{MARKUPS[1]}{BIDI_NAME}", hostile_lab
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("l")
        await until(lambda: isinstance(app.screen, LabScreen) and "plain" in app.screen.state.running)
        await pilot.pause(0.1)
        assert_inert(
            screen_text(pilot),
            f"{MARKUPS[1]}{BIDI_NAME_SHOWN}",  # the heading: the scenarios' folder
            f"{QUIT}{BIDI_NAME_SHOWN}",  # the matrix's row
            f"{QUIT}{BIDI_NAME_SHOWN}: the gate could not run: {MARKUPS[1]} {FORGED_PASS_SHOWN[:20]}",
        )
        await click_on(pilot, QUIT)
        assert app.return_code is None
