"""Known failures at base: base's suite run once per base commit and
profile, cached by the caller, and `runs` judged against it."""

from __future__ import annotations

import asyncio
import dataclasses
import stat
from pathlib import Path

import pytest

from gatetui.backends.base import CommandResult
from gatetui.backends.local import LocalBackend
from gatetui.gate.checks import CheckId, Status
from gatetui.gate.events import OutputChunk, RunFinished
from gatetui.gate.judging.baseline import BaseRun, cache_key, judge_runs_against
from gatetui.gate.judging.results import SuiteRun
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.reports.junit import Outcome, Report, TestResult
from gatetui.gate.runner import run_gate
from gatetui.supervise.gate_inputs import StateCache
from tests.support.baseline_cache import MemoryCache
from tests.support.gating import shared_layers
from tests.support.repos import MakeRepo

OK = CommandResult(exit_code=0, wall_seconds=1.0)
FAILED = CommandResult(exit_code=1, wall_seconds=1.0)
P, F = Outcome.PASSED, Outcome.FAILED


def report(**outcomes: Outcome) -> Report:
    return Report.from_results(TestResult(f"t.py::{k}", v) for k, v in outcomes.items())


def runs(**outcomes: Outcome) -> list[SuiteRun]:
    failed = F in outcomes.values()
    return [SuiteRun(f"run {i}", FAILED if failed else OK, report(**outcomes)) for i in (1, 2, 3)]


BASE_RUN = BaseRun("b" * 40, {"t.py::old": "passed", "t.py::broken": "failed", "t.py::gone": "error"})


def test_only_failures_base_already_had_are_tolerated() -> None:
    assert BASE_RUN.failing == frozenset({"t.py::broken", "t.py::gone"})
    ok = judge_runs_against(runs(old=P, broken=F, new=P), BASE_RUN)
    assert (ok.status, ok.detail) == (Status.PASS, "3 of 3 runs passed; already failing at base: t.py::broken")
    regressed = judge_runs_against(runs(old=F, broken=F), BASE_RUN)
    assert (regressed.status, regressed.detail) == (
        Status.FAIL,
        "0 of 3 passed; run 1: t.py::old failed; already failing at base: t.py::broken",
    )
    new_failing = judge_runs_against(runs(old=P, new=F), BASE_RUN)
    assert (new_failing.status, new_failing.detail) == (Status.FAIL, "0 of 3 passed; run 1: t.py::new failed")


def test_a_tolerant_run_still_needs_a_passing_test_and_a_report() -> None:
    known = frozenset({"t.py::broken"})
    assert SuiteRun("r", FAILED, report(old=P, broken=F), tolerated=known).passed is True
    assert SuiteRun("r", FAILED, report(broken=F), tolerated=known).passed is False
    assert SuiteRun("r", FAILED, None, "no report written", tolerated=known).passed is False
    assert SuiteRun("r", FAILED, report(old=P), tolerated=known).passed is False  # exit 1 and nothing failed
    assert SuiteRun("r", FAILED, report(old=P, broken=F)).passed is False  # strict by default


def test_cached_records_are_checked_before_use() -> None:
    record = BASE_RUN.to_json()
    assert BaseRun.from_json(record, "b" * 40) == dataclasses.replace(BASE_RUN, cached=True)
    assert BaseRun.from_json(record, "c" * 40) is None  # another base commit
    assert BaseRun.from_json({**record, "format": 0}, "b" * 40) is None
    assert BaseRun.from_json({**record, "outcomes": {"t.py::a": "great"}}, "b" * 40) is None
    assert BaseRun.from_json(None, "b" * 40) is None


def test_state_cache_writes_through_the_store(tmp_path: Path) -> None:
    cache = StateCache(tmp_path / "state", tmp_path / "repo")
    assert cache.get("k1") is None
    assert not (tmp_path / "state").exists()
    cache.put("k1", BASE_RUN.to_json())
    assert cache.get("k1") == BASE_RUN.to_json()
    assert stat.S_IMODE((tmp_path / "state").stat().st_mode) == 0o700


BASE = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "mathlib"\nversion = "0.1.0"\n\n[tool.setuptools]\npackages = ["mathlib"]\n\n'
        "[tool.gatetui]\nbaseline = true\n"
    ),
    "mathlib/__init__.py": "def double(x):\n    return x + x\n\n\ndef half(x):\n    return x / 2\n",
    "tests/test_math.py": (
        "from mathlib import double, half\n\n\ndef test_double():\n    assert double(3) == 6\n\n\n"
        "def test_half():\n    assert half(3) == 1.5\n\n\n"
        "def test_needs_a_file_nobody_committed():\n    open('tests/data.csv').read()\n"
    ),
}
# Head breaks half(), which passed at base: PASS_TO_PASS, so runs fails.
HEAD = {"mathlib/__init__.py": "def double(x):\n    return x + x\n\n\ndef half(x):\n    return x // 2\n"}


def gate(repo: Path, work: Path, cache: MemoryCache) -> list[object]:
    async def go() -> list[object]:
        plan = make_plan(GateRequest(repo, "main", "agent/x", baseline_cache=cache))
        return [e async for e in run_gate(plan, LocalBackend(work_root=work, layers=shared_layers()))]

    return asyncio.run(go())


@pytest.mark.sandbox
@pytest.mark.install
def test_a_test_that_passed_at_base_fails_runs_and_base_runs_once(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo(BASE, HEAD)
    cache = MemoryCache()
    first = gate(repo, tmp_path, cache)
    done = first[-1]
    assert isinstance(done, RunFinished)
    result = {r.id: r for r in done.results}[CheckId.RUNS]
    assert (result.status, result.detail) == (
        Status.FAIL,
        "0 of 3 passed; run 1: tests/test_math.py::test_half failed; "
        "already failing at base: tests/test_math.py::test_needs_a_file_nobody_committed",
    )
    assert done.baseline.to_json() == {
        "rule": "baseline",
        "used": True,
        "requested": True,
        "base": done.digests.base,
        "cached": False,
        "known_failures": ["tests/test_math.py::test_needs_a_file_nobody_committed"],
        "problem": "",
    }
    plan = make_plan(GateRequest(repo, "main", "agent/x"))
    assert list(cache.records) == [cache_key(done.digests.base, plan.profile, plan.policy)]

    second = gate(repo, tmp_path, cache)  # the same base commit: from the cache, no base workspace
    again = second[-1]
    assert isinstance(again, RunFinished)
    assert (again.baseline.cached, {r.id: r for r in again.results}[CheckId.RUNS].detail) == (True, result.detail)
    assert [e for e in second if isinstance(e, OutputChunk) and e.stream.startswith("baseline")] == []
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("gatetui-")] == []


def test_the_cache_key_follows_how_base_is_installed_and_run(make_repo: MakeRepo) -> None:
    repo = make_repo(BASE, HEAD)
    plan = make_plan(GateRequest(repo, "main", "agent/x"))
    profile, policy = plan.profile, plan.policy
    key = cache_key("a" * 40, profile, policy)
    assert key == cache_key("a" * 40, profile, dataclasses.replace(policy, timeout=5.0))
    assert key != cache_key("a" * 40, profile, dataclasses.replace(policy, test_network=True))
    assert key != cache_key(
        "a" * 40,
        dataclasses.replace(profile, suite=dataclasses.replace(profile.suite, command=".venv/bin/python -m pytest -x")),
        policy,
    )
    assert key != cache_key(
        "a" * 40, dataclasses.replace(profile, install=dataclasses.replace(profile.install, commands=("true",))), policy
    )
    assert key != cache_key("c" * 40, profile, policy)


def test_base_own_run_has_a_cache_place_without_the_baseline_setting(make_repo: MakeRepo) -> None:
    """Base's own run is also asked for skips and for a runner that will
    not start: it is cached under the same kind of key whether or not
    `baseline` is set, so a supervisor pays for it once per base commit."""
    without = {**BASE, "pyproject.toml": BASE["pyproject.toml"].replace("baseline = true\n", "")}
    plan = make_plan(GateRequest(make_repo(without, HEAD), "main", "agent/x"))
    assert (plan.policy.baseline, plan.baseline_key) == (False, cache_key(plan.base.sha, plan.profile, plan.policy))
