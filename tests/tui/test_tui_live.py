"""The app driven by Pilot over real sample repos with the real local
backend: the agent's commit lands, rows change live, a newer commit cancels
the older run, the review screen, history after a restart, the keys."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import Static

from gatetui.backends.base import Backend
from gatetui.errors import BackendError
from gatetui.lab.demo import move_branch
from gatetui.tui.screens.dialogs import ErrorScreen, HelpScreen
from gatetui.tui.screens.review import ReviewScreen
from tests.support.tui import SIZE, cell, column, commit_on_top, make_app, sample_at_base, wait_for, workspaces

pytestmark = pytest.mark.asyncio


@pytest.mark.sandbox
@pytest.mark.install
async def test_a_commit_lands_and_check_rows_go_running_then_fail(tmp_path: Path) -> None:
    repo, head, _ = sample_at_base("skip_marker", tmp_path / "repo")
    app = make_app(repo, tmp_path)
    seen: list[dict[str, str]] = []
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: cell(pilot, "#branches", "agent/skip_marker", "verdict") == "at base")
        move_branch(repo, "agent/skip_marker", head)

        def finished() -> bool:
            seen.append(column(pilot, "#checks", "status"))
            return cell(pilot, "#branches", "agent/skip_marker", "verdict") == "FAIL"

        await wait_for(pilot, finished)
        final = column(pilot, "#checks", "status")
        await pilot.press("q")
    installs = [s.get("install") for s in seen]
    assert "running" in installs and installs.index("running") < installs.index("pass")
    first_skip_fail = next(i for i, s in enumerate(seen) if s.get("no_new_skips") == "FAIL")
    assert seen[first_skip_fail]["install"] != "pass"  # the diff answers before the install ends
    assert final == {
        "install": "pass",
        "runs": "pass",
        "tests_kept": "pass",
        "no_new_skips": "FAIL",
        "old_tests": "FAIL",
        "hidden": "skip",
        "covered": "skip",
        "bites": "skip",
    }
    assert workspaces(tmp_path) == []


@pytest.mark.sandbox
@pytest.mark.install
async def test_a_newer_commit_cancels_the_older_run(tmp_path: Path) -> None:
    repo, head, _ = sample_at_base("honest_fix", tmp_path / "repo")
    app = make_app(repo, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        branch = app.supervisor.branches
        await wait_for(pilot, lambda: "agent/honest_fix" in branch)
        move_branch(repo, "agent/honest_fix", head)
        await wait_for(pilot, lambda: cell(pilot, "#checks", "install", "status") == "running")
        newer = commit_on_top(repo, head, "NOTES.md", "one more thing\n")
        move_branch(repo, "agent/honest_fix", newer)
        await wait_for(pilot, lambda: len(branch["agent/honest_fix"].runs) == 2)
        older, latest = branch["agent/honest_fix"].runs
        await wait_for(pilot, lambda: len(workspaces(tmp_path)) <= 1)  # the older run's workspace is gone
        assert (older.status, older.head, latest.head) == ("cancelled", head, newer)
        # the table follows the supervisor's state on its next refresh: wait for the rows, not a time
        shown = {latest.run_id: "running", older.run_id: "cancelled"}
        await wait_for(pilot, lambda: column(pilot, "#runs", "verdict") == shown)
        await pilot.press("c")  # and the footer's cancel stops the newer one
        await wait_for(pilot, lambda: workspaces(tmp_path) == [])
        assert latest.status == "cancelled"
        await pilot.press("q")


@pytest.mark.sandbox
@pytest.mark.install
async def test_review_screen_then_history_after_a_restart(tmp_path: Path) -> None:
    repo, head, _ = sample_at_base("loosened_assertion", tmp_path / "repo")
    async with make_app(repo, tmp_path).run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "agent/loosened_assertion" in pilot.app.supervisor.branches)
        move_branch(repo, "agent/loosened_assertion", head)
        await wait_for(pilot, lambda: cell(pilot, "#branches", "agent/loosened_assertion", "verdict") == "REVIEW")
        await pilot.press("v")
        screen = pilot.app.screen
        assert isinstance(screen, ReviewScreen)
        heading = str(screen.query_one("#review-head", Static).render())
        assert "failing base test: tests/test_leap.py::test_leap_day fails under base's tests" in heading
        base_side, head_side = (str(s.render()) for s in screen.query(".side"))
        assert "  20     assert is_leap_year(1900) is False\n" in base_side
        assert "  20     assert is_leap_year(1900) is not None\n" in head_side
        await pilot.press("a")
        assert "decided: accepted" in str(screen.query_one("#review-head", Static).render())
        await pilot.press("escape", "q")
    app = make_app(repo, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(column(pilot, "#runs", "verdict")))
        [(run_id, verdict)] = column(pilot, "#runs", "verdict").items()
        assert (verdict, cell(pilot, "#runs", run_id, "review")) == ("REVIEW", "accepted")
        assert cell(pilot, "#checks", "old_tests", "status") == "REVIEW"
        digests = str(app.screen.query_one("#digests", Static).render()).splitlines()
        assert digests[-1] == "rule      strict: every test must pass"  # which rule judged, from history
        assert app.supervisor.branches["agent/loosened_assertion"].latest.in_progress is False
        await pilot.press("q")
    assert workspaces(tmp_path) == []


@pytest.mark.sandbox
@pytest.mark.install
async def test_the_review_screen_shows_the_input_that_tells_a_survivor_apart(tmp_path: Path) -> None:
    """toothless_test's new test runs the fix and checks no century year:
    two mutants survive, and the search finds for each the input (and both
    results) that no test checks, shown under head's line."""
    repo, head, _ = sample_at_base("toothless_test", tmp_path / "repo")
    async with make_app(repo, tmp_path).run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "agent/toothless_test" in pilot.app.supervisor.branches)
        move_branch(repo, "agent/toothless_test", head)
        await wait_for(pilot, lambda: cell(pilot, "#branches", "agent/toothless_test", "verdict") == "REVIEW")
        await pilot.press("v")
        screen = pilot.app.screen
        assert isinstance(screen, ReviewScreen)
        head_side = "".join(str(s.render()) for s in screen.query(".side"))
        told = [line.strip() for line in head_side.splitlines() if "mutant told apart" in line]
        assert len(told) == 2, head_side
        for line in told:
            assert re.fullmatch(
                r"\^ mutant told apart: is_leap_year\(\d+\) gives (True|False) here, "
                r"(True|False) with `.+`; no test checks it",
                line,
            ), line
        await pilot.press("escape", "q")


@pytest.mark.sandbox
@pytest.mark.install  # the gate it starts is cancelled, but may get as far as its install first
async def test_keys_do_what_the_footer_says(tmp_path: Path) -> None:
    repo, head, _ = sample_at_base("honest_fix", tmp_path / "repo")
    move_branch(repo, "agent/honest_fix", head)  # committed while the app was closed

    def factory(name: str) -> Backend:
        raise BackendError(f"the {name} backend needs RUNTIME_API_KEY: set it, or stay on local")

    app = make_app(repo, tmp_path, factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        keys = {k: b.binding.description for k, b in app.screen.active_bindings.items() if b.binding.show}
        assert keys == {
            "r": "rerun",
            "c": "cancel",
            "v": "review",
            "y": "copy verdict",
            "l": "rules lab",
            "question_mark": "help",
            "b": "backend",
            "q": "quit",
        }
        runs = app.supervisor.branches
        await wait_for(pilot, lambda: "agent/honest_fix" in runs and runs["agent/honest_fix"].status == "running")
        await pilot.press("c")
        await wait_for(pilot, lambda: cell(pilot, "#branches", "agent/honest_fix", "verdict") == "no run")
        await pilot.press("r")
        await wait_for(pilot, lambda: len(runs["agent/honest_fix"].runs) == 2)
        await pilot.press("c")
        assert [r.status for r in runs["agent/honest_fix"].runs] == ["cancelled", "cancelled"]
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape", "b")
        assert isinstance(app.screen, ErrorScreen)
        assert "needs RUNTIME_API_KEY" in str(app.screen.query(Static)[1].render())
        await pilot.press("escape", "v")
        assert app.screen is app.main
        await wait_for(pilot, lambda: workspaces(tmp_path) == [])
        await pilot.press("q")
    assert app.is_running is False


@pytest.mark.sandbox
@pytest.mark.install  # the replayed commits are gated until the app quits, midway
async def test_the_demo_replays_each_agent_commit_live(tmp_path: Path) -> None:
    import functools

    from gatetui.lab.demo import Workshop, replay, write_workshop
    from gatetui.tui.app import GatetuiApp

    workshop = write_workshop(tmp_path / "workshop")
    app = make_app(workshop.repo, tmp_path)
    first_two = Workshop(workshop.repo, workshop.moves[:2])
    app.after_start = functools.partial(replay, first_two, 0.2, 0.3)
    async with app.run_test(size=SIZE) as pilot:
        verdicts = lambda: column(pilot, "#branches", "verdict")  # noqa: E731
        await wait_for(pilot, lambda: len(verdicts()) == len(workshop.moves))
        assert set(verdicts().values()) == {"at base"}
        await wait_for(pilot, lambda: sum(v in ("running", "queued") for v in verdicts().values()) == 2)
        assert [verdicts()[b] != "at base" for b, _ in workshop.moves[:3]] == [True, True, False]
        await pilot.press("q")
    assert isinstance(app, GatetuiApp) and workspaces(tmp_path) == []


@pytest.mark.drives
async def test_the_log_keeps_the_last_lines_and_says_how_many_went(tmp_path: Path) -> None:
    from gatetui.gate.checks import CheckId
    from gatetui.gate.events import OutputChunk
    from gatetui.supervise.runs import LOG_LINES, Run

    repo, _, _ = sample_at_base("honest_fix", tmp_path / "repo")
    app = make_app(repo, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(app.supervisor.branches))
        branch = app.supervisor.branches["agent/honest_fix"]
        run = Run("flood", branch.name, branch.head, status="running")
        branch.runs.append(run)
        for block in range(250):
            text = "".join(f"line {block * 100 + i}\n" for i in range(100))
            app.supervisor.apply(run, OutputChunk(CheckId.INSTALL, "install", text))
        await pilot.pause(0.3)
        title = str(pilot.app.screen.query_one("#log-title", Static).render())
        assert (
            title
            == f"output of install: 25,000 lines, {25_000 - LOG_LINES:,} earlier lines dropped (the last {LOG_LINES:,} kept)"
        )
        log = pilot.app.screen.query_one("#log-lines")
        assert (log.line_count, log.lines[-1]) == (LOG_LINES, "install | line 24999")
        run.status = "cancelled"
        await pilot.press("q")


@pytest.mark.drives
async def test_the_submit_after_the_cap_raises_the_escalation_on_screen(tmp_path: Path) -> None:
    import asyncio

    from gatetui.agent.submit import submit_once
    from gatetui.supervise.serve import SubmitServer
    from tests.support.repos import git

    repo, _, _ = sample_at_base("honest_fix", tmp_path / "repo")
    clone = tmp_path / "agent"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "checkout", "-q", "agent/honest_fix")
    (clone / "NOTES.md").write_text("one more try\n")
    app = make_app(repo, tmp_path)
    app.submit_server = SubmitServer(app.supervisor)  # the default socket, found from the clone's origin
    for _ in range(3):  # the branch's three submits are used
        app.supervisor.store.count_submit(app.supervisor.repo, "agent/honest_fix")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.submit_server.path.exists())
        before = git(clone, "rev-parse", "HEAD")
        outcome = await asyncio.to_thread(submit_once, clone, "once more")
        await wait_for(pilot, lambda: "ESCALATED" in cell(pilot, "#branches", "agent/honest_fix", "branch"))
        await wait_for(pilot, lambda: len(app._notifications) > 0)  # posted beside the mark, not before it
        notes = [(n.title, n.message) for n in app._notifications]
        title = str(app.screen.query_one("#run-title", Static).render())
        assert app.screen.branch_name == "agent/honest_fix"
        await pilot.press("g")  # a person gives the submits back
        marked_after = cell(pilot, "#branches", "agent/honest_fix", "branch")
        await pilot.press("q")
    assert (outcome.code, outcome.text.startswith("not gated: agent/honest_fix has used its 3 submits")) == (4, True)
    [(kind, said)] = notes
    assert kind == "a person is asked"
    assert re.fullmatch(
        r"agent/honest_fix used its 3 submits and submitted again \(at [0-9a-f]{7}\): review its "
        r"last runs and take over",
        said,
    )
    # not gated, so not committed either: the agent's copy is as it was, its work still in the files
    assert git(clone, "rev-parse", "HEAD") == before
    assert git(clone, "status", "--porcelain") == "?? NOTES.md"
    assert title.endswith("\nESCALATED: the agent used its submits; review its runs, then g gives its submits back")
    assert marked_after == "agent/honest_fix"
    assert app.supervisor.submits_used("agent/honest_fix") == 0
    assert not app.submit_server.path.exists()


@pytest.mark.drives
async def test_the_runtime_backends_own_news_becomes_a_notification(tmp_path: Path) -> None:
    """A capacity countdown from a worker thread shows on screen, not over it."""
    import asyncio

    from gatetui.backends.runtime import RuntimeBackend

    repo, _, _ = sample_at_base("honest_fix", tmp_path / "repo")
    made: list[RuntimeBackend] = []

    def factory(name: str) -> Backend:
        made.append(RuntimeBackend(on_progress=lambda line: None))
        return made[-1]

    app = make_app(repo, tmp_path, factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        assert app.supervisor.backend is made[0]
        # from a worker thread, as the backend's countdown comes; the loop keeps running meanwhile
        await asyncio.to_thread(made[0].on_progress, "runtime: no capacity; retrying in 20 s")
        await pilot.pause(0.3)
        notes = [n.message for n in app._notifications]
        assert notes == ["next runs use the runtime backend", "runtime: no capacity; retrying in 20 s"]
        await pilot.press("q")
