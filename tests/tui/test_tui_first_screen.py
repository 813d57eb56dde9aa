"""The screen a new user meets, driven by Pilot over a sample repo
with a backend that gates nothing: each test failed before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from gatetui.supervise.ref_watcher import RefWatcher
from gatetui.supervise.store import Store
from gatetui.supervise.supervisor import Supervisor
from gatetui.tui.app import GatetuiApp
from gatetui.tui.format import VERDICT_WORD
from gatetui.tui.widgets.branches import RunsTable
from tests.support.repos import git
from tests.support.supervising import FakeBackend
from tests.support.tui import NOW, SIZE, record, sample_at_base, wait_for

pytestmark = [pytest.mark.asyncio, pytest.mark.drives]  # each drives the app


def two_branches(tmp: Path) -> tuple[Path, Store]:
    """honest_fix with two kept runs of its head, and a branch sorted before it."""
    repo, head, base = sample_at_base("honest_fix", tmp / "repo")
    git(repo, "branch", "-f", "agent/honest_fix", head)
    git(repo, "branch", "agent/aaa", head)
    store = Store.open(tmp / "state")
    for run_id, age, branch in (
        ("older", 900, "agent/honest_fix"),
        ("newer", 300, "agent/honest_fix"),
        ("other", 300, "agent/aaa"),
    ):
        kept = record("honest_fix", head, base, ())
        store.save_run(repo, {**kept, "run_id": run_id, "branch": branch, "finished_at": NOW - age})
    return repo, store


async def test_an_older_run_stays_on_screen_while_the_clock_ticks(tmp_path: Path) -> None:
    repo, store = two_branches(tmp_path)
    now = [NOW]
    app = GatetuiApp(
        Supervisor(repo, FakeBackend(released=False), store, clock=lambda: now[0], watcher=RefWatcher(repo)),
        clock=lambda: now[0],
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = app.main
        await wait_for(pilot, lambda: "agent/honest_fix" in app.supervisor.branches)
        await pilot.press("down")  # from agent/aaa to agent/honest_fix
        await wait_for(pilot, lambda: screen.branch_name == "agent/honest_fix")
        screen.query_one(RunsTable).focus()
        await pilot.press("down", "enter")  # the older run
        await wait_for(pilot, lambda: screen.run_id == "older")
        for _ in range(3):  # the `when` columns change: the branch table is rebuilt each time
            now[0] += 61
            screen.tick()
            await pilot.pause()
        shown = (screen.branch_name, screen.run_id, screen.query_one(RunsTable).selected_key)
        title = str(screen.query_one("#run-title", Static).render())
        await pilot.press("q")
    assert shown == ("agent/honest_fix", "older", "older")
    assert "(an older run: enter on the newest follows it again)" in title


async def test_a_branch_that_arrived_only_through_submit_is_listed_and_kept(tmp_path: Path) -> None:
    """The agent's branch lives in its clone, never in the supervised repo."""
    import asyncio

    from gatetui.agent.submit import submit_once
    from gatetui.supervise.serve import SubmitServer
    from tests.support.tui import cell

    repo, _, _ = sample_at_base("honest_fix", tmp_path / "repo")
    clone = tmp_path / "agent"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "checkout", "-qb", "agent/only-here")
    (clone / "NOTES.md").write_text("a note\n")
    store = Store.open(tmp_path / "state")

    def app() -> GatetuiApp:
        made = GatetuiApp(Supervisor(repo, FakeBackend(), store, watcher=RefWatcher(repo)))
        made.submit_server = SubmitServer(made.supervisor)
        return made

    first = app()
    async with first.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: first.submit_server.path.exists())
        outcome = await asyncio.to_thread(submit_once, clone, "note")
        await wait_for(pilot, lambda: cell(pilot, "#branches", "agent/only-here", "branch") == "agent/only-here")
        listed = cell(pilot, "#branches", "agent/only-here", "verdict")
        await pilot.press("q")
    assert "agent/only-here" not in git(repo, "branch", "--list")  # the supervised repo was not written
    status = first.supervisor.branches["agent/only-here"].status
    assert (outcome.code, listed) == ({"pass": 0, "error": 3}.get(status, 1), VERDICT_WORD[status])
    again = app()
    async with again.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "agent/only-here" in again.supervisor.branches)
        await wait_for(pilot, lambda: cell(pilot, "#branches", "agent/only-here", "branch") == "agent/only-here")
        runs = [r.run_id for r in again.supervisor.branches["agent/only-here"].runs]
        await pilot.press("q")
    assert runs == [r.run_id for r in first.supervisor.branches["agent/only-here"].runs]  # kept, not gated again


async def test_y_says_where_the_verdict_block_went_and_keeps_a_file(tmp_path: Path) -> None:
    repo, store = two_branches(tmp_path)
    app = GatetuiApp(
        Supervisor(repo, FakeBackend(released=False), store, clock=lambda: NOW, watcher=RefWatcher(repo)),
        clock=lambda: NOW,
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.main.run is not None)
        await pilot.press("y")
        await wait_for(pilot, lambda: len(app._notifications) > 0)
        said = [n.message for n in app._notifications][-1]
        block = app.main.run.verdict_block() if app.main.run else ""
        await pilot.press("q")
    path = Path(said.rsplit("also in ", 1)[1])
    assert said.startswith("verdict block sent to the terminal's clipboard (some terminals ignore it); also in ")
    assert path.read_text() == block + "\n"
    assert path.is_relative_to(store.root) and block.endswith("verdict: pass")
