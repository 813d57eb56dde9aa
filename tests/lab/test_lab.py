"""`gatetui lab`: scenarios gated under a rules file, compared cell by cell
with what each scenario expects; bad input refused before any gate starts."""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
from pathlib import Path

import pytest

from gatetui.config import load_seal_file
from gatetui.lab import rules
from gatetui.lab.rules import LabRow, Outcome, add_lab_parser, cmd_lab, matrix, run_lab, summary
from gatetui.lab.samples import SAMPLES_DIR, load_scenarios
from tests.support.lab import STRICT

pytestmark = pytest.mark.xdist_group("test_lab")  # one xdist worker builds its module-scoped lab run


def args(**given: object) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="gatetui")
    add_lab_parser(parser.add_subparsers(dest="command"))
    argv = ["lab"]
    for key, value in given.items():
        argv += [f"--{key}"] if value is True else [f"--{key}", str(value)]
    return parser.parse_args(argv)


@pytest.fixture(scope="module")
def strict_lab(tmp_path_factory: pytest.TempPathFactory) -> list[Outcome]:
    root = tmp_path_factory.mktemp("lab")
    for name in ("honest_fix", "section_version_bump"):
        shutil.copytree(SAMPLES_DIR / name, root / "scenarios" / name)
    (root / "rules.toml").write_text(STRICT)
    (root / "work").mkdir()
    return run_lab(root / "scenarios", load_seal_file(root / "rules.toml"), work_root=root / "work")


@pytest.mark.sandbox
@pytest.mark.install
def test_strict_rules_stop_both_honest_changes(strict_lab: list[Outcome]) -> None:
    differ = [row for outcome in strict_lab for row in outcome.rows() if row.differs]
    assert differ == [
        LabRow("honest_fix", "old_tests", "pass", "fail"),
        LabRow("honest_fix", "bites", "pass", "skipped"),
        LabRow("honest_fix", "verdict", "pass", "fail"),
        LabRow("section_version_bump", "old_tests", "pass", "fail"),
        LabRow("section_version_bump", "bites", "pass", "skipped"),
        LabRow("section_version_bump", "verdict", "pass", "fail"),
    ]
    assert [len(o.rows()) for o in strict_lab] == [9, 9]


@pytest.mark.sandbox
@pytest.mark.install
def test_summary_says_which_rule_stopped_what(strict_lab: list[Outcome]) -> None:
    assert summary(strict_lab).splitlines() == [
        "rule 'default' (on_change = review)",
        "  sees a change in cheats: none",
        "  sees a change in honest ones: honest_fix, section_version_bump",
        "  sees nothing of: none",
        "rule 'existing tests' (on_change = fail, allow_new)",
        "  sees a change in cheats: none",
        "  sees a change in honest ones: honest_fix",
        "  sees nothing of: none",
        "rule 'project file' (on_change = fail)",
        "  sees a change in cheats: none",
        "  sees a change in honest ones: section_version_bump",
        "  sees nothing of: none",
        "slipped through (a cheat that passed): none",
        "stopped although honest: honest_fix (got fail), section_version_bump (got fail)",
        "2 scenarios, 6 of 18 cells differ from what the scenarios expect",
    ]


@pytest.mark.sandbox
@pytest.mark.install
def test_matrix_marks_the_cells_that_differ(strict_lab: list[Outcome]) -> None:
    lines = matrix(strict_lab).splitlines()
    assert lines[0].split() == [
        "scenario",
        "install",
        "runs",
        "tests_kept",
        "no_new_skips",
        "old_tests",
        "hidden",
        "covered",
        "bites",
        "verdict",
    ]
    # bites does not run for a change that already fails
    assert lines[1].split() == [
        "honest_fix",
        "pass",
        "pass",
        "pass",
        "pass",
        "fail",
        "(want",
        "pass)",
        "skipped",
        "pass",
        "skipped",
        "(want",
        "pass)",
        "fail",
        "(want",
        "pass)",
    ]
    assert len(lines) == 3


@pytest.mark.sandbox
@pytest.mark.install
def test_json_rows_and_exit_code(
    strict_lab: list[Outcome], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(rules, "run_lab", lambda folder, seal, progress=None: strict_lab)
    (tmp_path / "rules.toml").write_text(STRICT)
    assert cmd_lab(args(rules=tmp_path / "rules.toml", json=True)) == 1
    shown = json.loads(capsys.readouterr().out)
    assert (sorted(shown), shown["mismatches"], len(shown["rows"])) == (["mismatches", "rows"], 6, 18)
    assert shown["rows"][4] == {"scenario": "honest_fix", "check": "old_tests", "expected": "pass", "actual": "fail"}


def test_exit_zero_when_every_cell_matches(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = next(s for s in load_scenarios() if s.name == "loosened_assertion")
    outcome = Outcome(scenario, {**scenario.checks, "verdict": scenario.verdict})
    monkeypatch.setattr(rules, "run_lab", lambda folder, seal, progress=None: [outcome])
    assert cmd_lab(args()) == 0
    out = capsys.readouterr().out
    assert "slipped through (a cheat that passed): none" in out
    assert "1 scenarios, 0 of 9 cells differ from what the scenarios expect" in out


def test_a_cheat_that_passes_is_named_as_slipped_through() -> None:
    scenario = next(s for s in load_scenarios() if s.name == "loosened_assertion")
    outcome = Outcome(scenario, {**scenario.checks, "old_tests": "pass", "verdict": "pass"})
    assert "slipped through (a cheat that passed): loosened_assertion (want review)" in summary([outcome])


# --- bad input: exit 2, one line, before any gate -----------------------------


@pytest.mark.parametrize(
    "text, words",
    [
        ('on_change = "sometimes"\n', "seal.on_change must be 'review' or 'fail' or 'allow', not 'sometimes'"),
        ("[[rules]]\nname = 1\n", "seal.rules[1].name must be a non-empty string, not 1"),
        (None, "cannot read the rules file"),
    ],
)
def test_a_bad_rules_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, words: str
) -> None:
    path = tmp_path / "rules.toml"
    if text is not None:
        path.write_text(text)
    assert cmd_lab(args(rules=path)) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_bad_scenario_folders_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cmd_lab(args(scenarios=tmp_path / "nowhere")) == 2
    assert cmd_lab(args(scenarios=tmp_path)) == 2
    (tmp_path / "stray").mkdir()
    assert cmd_lab(args(scenarios=tmp_path)) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"gatetui: {tmp_path / 'nowhere'}: no such samples folder",
        f"gatetui: no scenarios in {tmp_path}: each needs NAME/base, NAME/head and NAME/scenario.toml",
        f"gatetui: {tmp_path / 'stray' / 'scenario.toml'}: missing (every sample folder needs one)",
    ]


def test_a_scenario_with_bad_config_is_named_before_any_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(SAMPLES_DIR / "honest_fix", tmp_path / "bad")
    with (tmp_path / "bad" / "base" / "pyproject.toml").open("a") as toml:
        toml.write('\n[tool.gatetui.seal]\non_change = "later"\n')
    assert cmd_lab(args(scenarios=tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.startswith("gatetui: scenario bad: pyproject.toml [tool.gatetui] at base ")
    assert err.endswith("seal.on_change must be 'review' or 'fail' or 'allow', not 'later'\n")


# --- the lab as it happens: stream_lab (the TUI's lab screen reads it) ---------


def three_scenarios(tmp_path: Path) -> Path:
    for name in ("honest_fix", "skip_marker", "deleted_test"):
        shutil.copytree(SAMPLES_DIR / name, tmp_path / "scenarios" / name)
    return tmp_path / "scenarios"


def test_stream_lab_yields_the_plan_then_each_gate_as_it_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    took = {"honest_fix": 0.3, "skip_marker": 0.05, "deleted_test": 0.1}
    running: set[str] = set()
    most: list[int] = []

    async def fake_gate(scenario: rules.Scenario, plan: rules.Plan, work_root: Path | None = None) -> Outcome:
        running.add(scenario.name)
        most.append(len(running))
        await asyncio.sleep(took[scenario.name])
        running.discard(scenario.name)
        return Outcome(scenario, {**scenario.checks, "verdict": scenario.verdict})

    monkeypatch.setattr(rules, "gate_one", fake_gate)

    async def collect() -> list[rules.LabEvent]:
        return [event async for event in rules.stream_lab(three_scenarios(tmp_path), None)]

    events = asyncio.run(collect())
    assert [s.name for s in events[0].scenarios] == ["deleted_test", "honest_fix", "skip_marker"]  # type: ignore[union-attr]
    said = [
        (type(e).__name__, e.name if isinstance(e, rules.ScenarioStarted) else e.scenario.name)  # type: ignore[union-attr]
        for e in events[1:]
    ]
    assert said == [
        ("ScenarioStarted", "deleted_test"),
        ("ScenarioStarted", "honest_fix"),
        ("Outcome", "deleted_test"),
        ("ScenarioStarted", "skip_marker"),
        ("Outcome", "skip_marker"),
        ("Outcome", "honest_fix"),
    ]
    assert max(most) == rules.SIDE_BY_SIDE


def test_closing_the_stream_cancels_the_gates_in_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cancelled: list[str] = []

    async def endless_gate(scenario: rules.Scenario, plan: rules.Plan, work_root: Path | None = None) -> Outcome:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(scenario.name)
            raise
        raise AssertionError("never ends")

    monkeypatch.setattr(rules, "gate_one", endless_gate)

    async def three_events() -> list[rules.LabEvent]:
        stream = rules.stream_lab(three_scenarios(tmp_path), None)
        events = [await anext(stream), await anext(stream), await anext(stream)]
        await stream.aclose()
        return events

    events = asyncio.run(three_events())
    assert [type(e).__name__ for e in events] == ["LabPlanned", "ScenarioStarted", "ScenarioStarted"]
    assert sorted(cancelled) == ["deleted_test", "honest_fix"]


def test_stream_lab_refuses_bad_input_before_the_plan(tmp_path: Path) -> None:
    async def first() -> rules.LabEvent:
        return await anext(rules.stream_lab(tmp_path, None))

    with pytest.raises(rules.BadInput, match="no scenarios in"):
        asyncio.run(first())
