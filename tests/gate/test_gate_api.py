"""The one way to ask for a gate: every caller's request has the same
defaults, and what comes from outside the repo (hidden tests, the baseline
cache, a scenario's rules and seed) arrives the same way for all."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

from gatetui.config import SealSettings
from gatetui.gate.api import NO_INPUTS, GateInputs, gate_request
from gatetui.lab.rules import scenario_inputs
from gatetui.lab.samples import load_scenarios
from gatetui.supervise.gate_inputs import StateCache, gate_inputs, headless_inputs, repo_state
from gatetui.supervise.store import Store

HIDDEN = b"def test_hidden():\n    assert True\n"


def test_a_request_without_inputs_keeps_every_default(tmp_path: Path) -> None:
    request = gate_request(tmp_path, "main", "agent/x")
    assert (request.repo, request.base, request.head, request.timeout) == (tmp_path, "main", "agent/x", None)
    assert (request.seal, request.hidden, request.hidden_from, request.baseline_cache, request.random_seed) == (
        None,
        None,
        "",
        None,
        None,
    )
    assert len(request.run_id) == 12 and request.run_id != gate_request(tmp_path, "main", "agent/x").run_id


def test_a_request_carries_the_inputs_the_timeout_and_the_run_id(tmp_path: Path) -> None:
    seal = SealSettings()
    inputs = GateInputs(hidden={"t/test_h.py": HIDDEN}, hidden_from="/state/hidden", seal=seal, random_seed=7)
    request = gate_request(tmp_path, "main", "agent/x", inputs, timeout=30.0, run_id="r1")
    assert (request.hidden, request.hidden_from, request.seal, request.random_seed) == (
        {"t/test_h.py": HIDDEN},
        "/state/hidden",
        seal,
        7,
    )
    assert (request.timeout, request.run_id) == (30.0, "r1")
    assert GateInputs() == NO_INPUTS


def test_state_inputs_are_the_repos_hidden_folder_and_its_cache(tmp_path: Path) -> None:
    repo, state = tmp_path / "repo", tmp_path / "state"
    repo.mkdir()
    assert gate_inputs(state, repo).hidden == {}
    assert not state.exists()  # reading creates nothing
    folder = repo_state(state, repo) / "hidden" / "math"
    folder.mkdir(parents=True)
    (folder / "test_h.py").write_bytes(HIDDEN)
    inputs = gate_inputs(state, repo)
    assert (inputs.hidden, inputs.hidden_from) == ({"math/test_h.py": HIDDEN}, str(repo_state(state, repo) / "hidden"))
    assert isinstance(inputs.baseline_cache, StateCache) and inputs.baseline_cache.state_dir == state
    store = Store.open(state)
    assert gate_inputs(store.root, repo, store).hidden_from == inputs.hidden_from  # the supervisor's: the same


def test_headless_inputs_make_an_open_state_directory_private_and_say_so(tmp_path: Path) -> None:
    repo, state = tmp_path / "repo", tmp_path / "state"
    repo.mkdir()
    state.mkdir(mode=0o755)
    state.chmod(0o755)
    err = io.StringIO()
    assert headless_inputs(state, repo, err).hidden == {}
    assert oct(state.stat().st_mode & 0o777) == "0o700"
    assert err.getvalue().startswith(f"gatetui: the state directory {state} was open to others (mode 755)")


def test_a_scenario_brings_its_own_hidden_tests_seed_and_the_rules_given() -> None:
    scenarios = {s.name: s for s in load_scenarios()}
    # no sample pins a seed any more; one that does brings it
    seeded = replace(scenarios["order_dependent"], random_seed=20260101)
    hidden = scenarios["hidden_special_case"]
    seal = SealSettings()
    assert (scenario_inputs(seeded).random_seed, seeded.random_seed) == (20260101, 20260101)
    inputs = scenario_inputs(hidden, seal)
    assert inputs.hidden == hidden.hidden_tests() and inputs.hidden
    assert (inputs.seal, inputs.hidden_from, inputs.baseline_cache) == (seal, "", None)
