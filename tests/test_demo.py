"""The workshop demo's state: the samples' hidden tests where the supervisor reads them."""

from __future__ import annotations

from pathlib import Path

from gatetui.demo import install_hidden, write_workshop
from gatetui.samples import load_scenarios
from gatetui.state_inputs import hidden_tests
from gatetui.store import Store


def test_every_samples_hidden_tests_reach_the_workshops_state(tmp_path: Path) -> None:
    workshop = write_workshop(tmp_path / "workshop")
    store = Store.open(tmp_path / "state")
    expected = {rel: data for s in load_scenarios() for rel, data in s.hidden_tests().items()}
    assert install_hidden(workshop, store) == len(expected)
    assert hidden_tests(store.root, workshop.repo) == expected
    assert any(rel.endswith(".py") for rel in expected)
