"""The workshop demo's state: the samples' hidden tests where the supervisor reads them."""

from __future__ import annotations

from pathlib import Path

from gatetui.lab.demo import install_hidden, write_workshop
from gatetui.lab.samples import load_scenarios
from gatetui.supervise.state_inputs import hidden_tests
from gatetui.supervise.store import Store


def test_every_samples_hidden_tests_reach_the_workshops_state(tmp_path: Path) -> None:
    workshop = write_workshop(tmp_path / "workshop")
    store = Store.open(tmp_path / "state")
    expected = {rel: data for s in load_scenarios() for rel, data in s.hidden_tests().items()}
    assert install_hidden(workshop, store) == len(expected)
    assert hidden_tests(store.root, workshop.repo) == expected
    assert any(rel.endswith(".py") for rel in expected)


def test_the_replay_says_each_move_with_its_scenarios_story(tmp_path: Path) -> None:
    """The TUI follows each moved branch and shows what its scenario does."""
    import asyncio

    from gatetui.lab.demo import Workshop, replay
    from tests.conftest import git

    workshop = write_workshop(tmp_path / "workshop")
    told: list[tuple[str, str]] = []
    first_two = Workshop(workshop.repo, workshop.moves[:2], workshop.stories)
    asyncio.run(replay(first_two, 0.0, 0.0, moved=lambda branch, story: told.append((branch, story))))
    scenarios = {s.branch: s for s in load_scenarios()}
    assert [b for b, _ in told] == [b for b, _ in workshop.moves[:2]]
    for branch, story in told:
        assert story == f"{scenarios[branch].title}: {scenarios[branch].story}"
        assert git(workshop.repo, "rev-parse", branch) == dict(workshop.moves)[branch]


def test_the_workshop_commits_a_samples_head_names(tmp_path: Path) -> None:
    from tests.conftest import git

    workshop = write_workshop(tmp_path / "workshop")
    head = dict(workshop.moves)["agent/odd_name"]
    listed = git(workshop.repo, "ls-tree", "-r", "-z", "--name-only", head).split("\0")
    assert "tests/test_leap.py\n" in listed
