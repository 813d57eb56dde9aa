"""Order-dependent tests are caught every time, not by the luck
of one shuffle. Each order sample is gated GATES times as a user gates it
(no seed given: a fresh one drawn per gate), and `runs` must fail at least
as often as its stack guarantees (docs/reference/checks.md, the runs check): python and node
run one run in reverse order, which breaks every test that leans on one
declared before it; go runs each test alone once.
"""

from __future__ import annotations

import asyncio
import math
import os
import shutil
from pathlib import Path

import pytest

from gatetui.backends.local import LocalBackend
from gatetui.gate.checks import CheckId
from gatetui.gate.events import RunFinished
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from gatetui.lab.samples import load_scenarios, materialize
from gatetui.stacks.registry import STACKS

pytestmark = [pytest.mark.sandbox, pytest.mark.install]  # every gate for real, installs included

# 20 gates each in CI (`make test-order-loop`); 2 in `make test` (each with a
# fresh seed, both caught), which must stay under ten minutes on two cores.
GATES = int(os.environ.get("GATETUI_ORDER_GATES", "2"))
# sample -> the share of GATES whose `runs` must fail: python and node every gate, go 19 in 20
CAUGHT = {"order_dependent": 1.0, "node_order_dependent": 1.0, "go_order_dependent": 0.95}
SCENARIOS = {s.name: s for s in load_scenarios()}


async def _runs_and_seed(repo: Path, name: str, root: Path) -> tuple[str, int | None]:
    """One gate, no seed given: the `runs` status and the seed it drew."""
    plan = await asyncio.to_thread(make_plan, GateRequest(repo, "main", f"agent/{name}"))
    assert (plan.digests.random_seed is None) == (plan.profile.suite.shuffle is None)  # drawn where the runner shuffles
    last = None
    async for event in run_gate(plan, LocalBackend(work_root=root, layers=root / "layers")):
        last = event
    assert isinstance(last, RunFinished)
    runs = {r.id: r for r in last.results}[CheckId.RUNS]
    return runs.status.value, last.digests.random_seed


@pytest.mark.parametrize("name", sorted(CAUGHT))
def test_order_samples_fail_runs_whatever_the_seed(name: str, tmp_path: Path) -> None:
    scenario = SCENARIOS[name]
    missing = [p for p in STACKS[scenario.stack].needs if shutil.which(p) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed here (make tools installs go)")
    assert scenario.random_seed is None  # the catch must not hang on a seed the sample pins
    repo = materialize(scenario, tmp_path / name)
    outcomes = [asyncio.run(_runs_and_seed(repo, name, tmp_path)) for _ in range(GATES)]
    seeds = {seed for _, seed in outcomes}
    assert seeds == {None} or len(seeds) > GATES // 2  # fresh seeds, where the runner shuffles
    failed = [seed for status, seed in outcomes if status == "fail"]
    passed = [seed for status, seed in outcomes if status != "fail"]
    print(f"{name}: runs failed in {len(failed)} of {GATES} gates")  # the figure CI prints
    assert len(failed) >= math.ceil(CAUGHT[name] * GATES), f"{name}: runs passed with seeds {passed}"
