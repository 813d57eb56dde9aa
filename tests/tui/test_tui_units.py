"""The TUI's pieces without a screen: the side-by-side review, the workshop
demo's replay, the CLI's TUI path without a terminal."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from rich.text import Text

from gatetui.cli.main import main
from gatetui.errors import BadInput
from gatetui.git.repo import GitRepo
from gatetui.lab.demo import Workshop, replay, write_workshop
from gatetui.supervise.runs import ReviewFile
from gatetui.tui.format import ago
from gatetui.tui.screens.review import ADDED, REMOVED, side_by_side
from tests.support.tui import SCENARIOS


def test_side_by_side_aligns_and_highlights_the_changed_lines() -> None:
    left, right = side_by_side(ReviewFile("t.py", "a\nb\nc\n", "a\nB\nc\nd\n"))
    assert left.plain.splitlines() == ["   1 a", "   2 b", "   3 c", ""]
    assert right.plain.splitlines() == ["   1 a", "   2 B", "   3 c", "   4 d"]

    def styled(text: Text, style: str) -> list[str]:
        return [text.plain[s.start : s.end].strip() for s in text.spans if s.style == style]

    assert styled(left, REMOVED) == ["b"]
    assert styled(right, ADDED) == ["B", "d"]


def test_ago_counts_in_the_largest_unit() -> None:
    assert [ago(100, 100 + s) for s in (5, 300, 7200, 3 * 86400)] == ["5s ago", "5m ago", "2h ago", "3d ago"]
    assert ago(None, 5) == "-"


def test_the_workshop_holds_every_sample_at_base_until_replayed(tmp_path: Path) -> None:
    workshop = write_workshop(tmp_path / "w")
    assert [b for b, _ in workshop.moves] == [s.branch for s in SCENARIOS.values()]
    with GitRepo.open(workshop.repo) as git:
        heads, main_tip = git.branches("agent/*"), git.resolve("main")
        for branch, head in workshop.moves:
            assert git.merge_base(main_tip, heads[branch]) == heads[branch]  # at base: nothing to judge
            assert git.merge_base(main_tip, head) == heads[branch]  # the agent's change, from its base
    with pytest.raises(BadInput, match="not empty"):
        write_workshop(tmp_path / "w")


def test_replay_moves_each_branch_to_the_agents_commit(tmp_path: Path) -> None:
    workshop = write_workshop(tmp_path / "w")
    two = Workshop(workshop.repo, workshop.moves[:2])
    asyncio.run(replay(two, interval=0.0, first_after=0.0))
    with GitRepo.open(workshop.repo) as git:
        heads = git.branches("agent/*")
    assert [heads[b] for b, _ in two.moves] == [sha for _, sha in two.moves]
    assert heads[workshop.moves[2][0]] != workshop.moves[2][1]


def test_the_tui_without_a_terminal_says_what_to_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["."]) == 2
    assert "the TUI needs a terminal" in capsys.readouterr().err


def test_the_review_heading_names_failing_tests_and_findings_not_the_sealed_list() -> None:
    from gatetui.tui.screens.review import reasons_of

    detail = (
        "library code reaches into the test runner: import _pytest (calc.py:1); "
        "tests/test_calc.py::test_add fails under base's tests; sealed files changed at head: tests/test_calc.py"
    )
    assert reasons_of(detail) == [
        "finding: library code reaches into the test runner: import _pytest (calc.py:1)",
        "failing base test: tests/test_calc.py::test_add fails under base's tests",
    ]
    assert reasons_of("something else") == ["failing base test: something else"]


def test_every_bound_key_is_in_the_help_dialog() -> None:
    """A key the app answers to, on any screen, is listed under `?`."""
    from gatetui.tui.app import GatetuiApp
    from gatetui.tui.screens.dialogs import KEYS
    from gatetui.tui.screens.main import MainScreen
    from gatetui.tui.screens.review import ReviewScreen

    listed = {part.strip() for key, _ in KEYS for part in key.split("/")}
    names = {"question_mark": "?"}
    bound = {
        names.get(k, k)
        for cls in (GatetuiApp, MainScreen, ReviewScreen)
        for b in cls.BINDINGS
        for k in b.key.split(",")
    }  # type: ignore[union-attr]
    assert bound - listed == set()
    assert {"tab", "escape", "g", "a", "x"} <= listed
