"""The workshop demo's state: the samples' hidden tests where the supervisor reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatetui.lab.demo import install_hidden, write_workshop
from gatetui.lab.samples import load_scenarios
from gatetui.supervise.gate_inputs import hidden_tests
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
    from tests.support.repos import git

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
    from tests.support.repos import git

    workshop = write_workshop(tmp_path / "workshop")
    head = dict(workshop.moves)["agent/odd_name"]
    listed = git(workshop.repo, "ls-tree", "-r", "-z", "--name-only", head).split("\0")
    assert "tests/test_leap.py\n" in listed


@pytest.mark.asyncio
async def test_the_replay_moves_a_branch_only_when_a_gate_slot_is_free(tmp_path: Path) -> None:
    """Paced to the gate: with both slots held the third branch waits at its
    base, and moves once a gate ends; nothing piles up `queued`."""
    import asyncio

    from gatetui.lab.demo import Workshop, replay
    from gatetui.supervise.ref_watcher import RefWatcher
    from gatetui.supervise.supervisor import Supervisor
    from tests.support.repos import git
    from tests.support.supervising import FakeBackend, until

    workshop = write_workshop(tmp_path / "workshop")
    three = Workshop(workshop.repo, workshop.moves[:3], workshop.stories)
    backend = FakeBackend(released=False)
    sup = Supervisor(
        workshop.repo, backend, Store.open(tmp_path / "state"), watcher=RefWatcher(workshop.repo, step_ms=20)
    )
    told: list[str] = []
    await sup.start()
    replaying = asyncio.create_task(replay(three, 0.0, 0.0, moved=lambda branch, _: told.append(branch), pace=sup))
    try:
        first, second, third = (branch for branch, _ in three.moves)
        await until(
            lambda: (
                len(told) == 2
                and all((run := sup.run(b)) is not None and run.status == "running" for b in (first, second))
            )
        )
        assert sup.run(third) is None and not replaying.done()
        assert git(workshop.repo, "rev-parse", third) != dict(three.moves)[third]  # still at its base
        backend.release.set()
        await asyncio.wait_for(replaying, 30)
        await until(lambda: (run := sup.run(third)) is not None and not run.in_progress, timeout=30)
        assert told == [first, second, third]
    finally:
        replaying.cancel()
        await sup.stop()


@pytest.mark.asyncio
async def test_the_interval_is_the_least_gap_between_two_moves(tmp_path: Path) -> None:
    import asyncio

    from gatetui.lab.demo import Workshop, replay

    workshop = write_workshop(tmp_path / "workshop")
    loop = asyncio.get_running_loop()
    at: list[float] = []
    await replay(Workshop(workshop.repo, workshop.moves[:3]), 0.3, 0.0, moved=lambda *_: at.append(loop.time()))
    assert len(at) == 3 and all(later - earlier >= 0.3 for earlier, later in zip(at, at[1:]))
