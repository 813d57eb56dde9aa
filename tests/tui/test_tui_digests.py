"""Which rule judged, in the digest panel (after a restart, from history),
the record-to-Digests rebuild, and the credit table's monthly projection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from gatetui.gate.cost import Cost, Usage
from gatetui.gate.sealing.digests import Digests, RuleDigest
from gatetui.lab.demo import move_branch
from gatetui.supervise.ref_watcher import RefWatcher
from gatetui.supervise.runs import Run, digests_from_json
from gatetui.supervise.store import Store
from gatetui.supervise.supervisor import Supervisor
from gatetui.tui.app import GatetuiApp
from gatetui.tui.widgets.credit import DAY, month_projection, projection_note
from tests.support.supervising import FakeBackend
from tests.support.tui import NOW, SIZE, cell, record, sample_at_base, wait_for

JUDGED = Digests(
    "b" * 40,
    "h" * 40,
    "a1" * 32,
    "a1" * 32,
    (),
    "c3" * 32,
    ("pyproject.toml",),
    (),
    (RuleDigest("existing tests", "fail", True, "d4" * 32, "e5" * 32, ("tests/a.py",), ("tests/b.py",)),),
    random_seed=20260101,
    hidden="f6" * 32,
    hidden_files=3,
    test_network=True,
)


def test_a_record_gives_back_every_digest_the_run_had() -> None:
    assert digests_from_json(JUDGED.to_json()) == JUDGED
    plain = Digests("b" * 40, "h" * 40, "a1" * 32, "a1" * 32)
    assert digests_from_json(plain.to_json()) == plain


def app_with(tmp: Path, baseline: dict[str, Any], digests: Digests) -> GatetuiApp:
    """honest_fix judged once, read back from the store as after a restart."""
    repo, head, base = sample_at_base("honest_fix", tmp / "repo")
    store = Store.open(tmp / "state")
    stored = record("honest_fix", head, base, ())
    stored["digests"] = {**digests.to_json(), "base": base, "head": head}
    stored["baseline"] = baseline
    store.save_run(repo, stored)
    move_branch(repo, "agent/honest_fix", head)
    supervisor = Supervisor(repo, FakeBackend(released=False), store, clock=lambda: NOW, watcher=RefWatcher(repo))
    return GatetuiApp(supervisor, clock=lambda: NOW)


async def panel_lines(app: GatetuiApp) -> list[str]:
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: cell(pilot, "#branches", "agent/honest_fix", "verdict") == "pass", 10)
        await pilot.pause(0.05)
        text = str(app.screen.query_one("#digests", Static).render())
        await pilot.press("q")
    return text.splitlines()


@pytest.mark.asyncio
@pytest.mark.drives
async def test_the_panel_says_the_baseline_rule_seed_hidden_tests_and_network(tmp_path: Path) -> None:
    baseline = {
        "rule": "baseline",
        "used": True,
        "requested": True,
        "cached": True,
        "known_failures": ["tests/test_tz.py::test_local[utc]"],
        "problem": "",
    }
    lines = await panel_lines(app_with(tmp_path, baseline, JUDGED))
    assert lines[-2:] == [
        "rule      baseline: 1 known failure at base, cached: tests/test_tz.py::test_local[utc]",
        f"inputs    random order seed 20260101; hidden tests: 3 files ({'f6' * 6}); test runs had the network",
    ]


@pytest.mark.asyncio
@pytest.mark.drives
async def test_the_panel_says_strict_and_why_the_baseline_was_not_used(tmp_path: Path) -> None:
    baseline = {
        "rule": "strict",
        "used": False,
        "requested": True,
        "cached": False,
        "known_failures": [],
        "problem": "base's install failed",
    }
    lines = await panel_lines(app_with(tmp_path, baseline, Digests("b" * 40, "h" * 40, "a1" * 32, "a1" * 32)))
    assert lines[-1] == "rule      strict (baseline not usable: base's install failed)"
    assert lines[-2].startswith("seal      ") and not any(line.startswith("inputs") for line in lines)


def run_at(started: float, dollars_cpu_seconds: float) -> Run:
    return Run(
        "r",
        "agent/x",
        "h",
        status="pass",
        started_at=started,
        cost=Cost({"runs": Usage(10.0, dollars_cpu_seconds, 0.0)}),
    )


def test_the_projection_is_the_daily_average_times_30() -> None:
    now = 100 * DAY
    assert month_projection([], now) is None
    assert projection_note(None) == "per month*: no run yet to project from"
    burst = month_projection([run_at(now - 600, 36.0), run_at(now - 60, 36.0)], now)  # minutes apart: a day
    assert burst is not None and (burst.runs, burst.days, burst.month.cpu_seconds) == (2, 1.0, 72.0 * 30)
    spread = month_projection(
        [run_at(now - 10 * DAY, 36.0), run_at(now - DAY, 36.0), run_at(now - 40 * DAY, 999.0)], now
    )
    assert spread is not None and (spread.runs, spread.days, spread.month.cpu_seconds) == (2, 10.0, 72.0 * 3)
    assert projection_note(spread) == "* per month: the 2 runs of the last 10.0 days, per day x 30"
    # a burst says what it was, not "in 1.0 d" (five minutes of demo read as a day's pace, unsaid)
    assert projection_note(burst) == "* per month: the 2 runs of the last 10 min, counted as one day's work, x 30 days"


@pytest.mark.asyncio
@pytest.mark.drives
async def test_the_credit_table_says_what_a_kept_layer_saved_apart_from_what_was_spent(tmp_path: Path) -> None:
    """A gate that found its dependency layer did not pay for building it:
    the table shows that work as saved, on a row of its own, and the
    run's total is only what was spent."""
    repo, head, base = sample_at_base("honest_fix", tmp_path / "repo")
    store = Store.open(tmp_path / "state")
    stored = record("honest_fix", head, base, ())
    stored["cost"] = Cost(
        {"install": Usage(2.0, 1.5, 0.0), "runs": Usage(3.0, 6.0, 0.0)}, saved={"install": Usage(8.4, 12.0, 0.0)}
    ).to_json()
    store.save_run(repo, stored)
    move_branch(repo, "agent/honest_fix", head)
    supervisor = Supervisor(repo, FakeBackend(released=False), store, clock=lambda: NOW, watcher=RefWatcher(repo))
    async with GatetuiApp(supervisor, clock=lambda: NOW).run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: cell(pilot, "#branches", "agent/honest_fix", "verdict") == "pass", 10)
        await pilot.press("p")
        await wait_for(pilot, lambda: cell(pilot, "#cost-table", "saved-install", "what") != "", 10)
        rows = {
            key: [cell(pilot, "#cost-table", key, c) for c in ("what", "wall", "cpu")]
            for key in ("install", "run", "saved-install")
        }
        await pilot.press("q")
    assert rows == {
        "install": ["install", "2.0", "0.025"],
        "run": ["this run", "5.0", "0.125"],
        "saved-install": ["install saved (layer)", "8.4", "0.200"],
    }
