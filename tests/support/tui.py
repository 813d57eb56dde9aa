"""Helpers for the TUI tests: sample repos with the agent branch held at
base, an app over them, waiting on what the screen shows, and recorded
runs and lab results for screens drawn without a gate."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from dulwich.objects import Blob, Commit
from dulwich.repo import Repo
from textual.pilot import Pilot
from textual.widgets import DataTable

from gatetui.backends.base import Backend
from gatetui.backends.local import LocalBackend
from gatetui.gate.checks import CheckId
from gatetui.gate.cost import Cost, Usage
from gatetui.gate.sealing.digests import Digests, RuleDigest
from gatetui.lab.demo import move_branch
from gatetui.lab.rules import LabEvent, LabPlanned, Outcome, ScenarioStarted
from gatetui.lab.samples import IDENTITY, load_scenarios, materialize
from gatetui.supervise.ref_watcher import RefWatcher
from gatetui.supervise.store import Store
from gatetui.supervise.supervisor import Supervisor
from gatetui.tui.app import GatetuiApp
from tests.support.gating import shared_layers

SCENARIOS = {s.name: s for s in load_scenarios()}
SIZE = (150, 46)


def sample_at_base(name: str, dest: Path) -> tuple[Path, str, str]:
    """The sample as a repo whose agent branch still points at base:
    (repo, head sha, base sha). Moving the branch is the agent's commit."""
    repo = materialize(SCENARIOS[name], dest)
    with Repo(str(repo)) as git:
        head = git.refs[f"refs/heads/agent/{name}".encode()].decode()
        base = git.refs[b"refs/heads/main"].decode()
    move_branch(repo, f"agent/{name}", base)
    return repo, head, base


def commit_on_top(repo: Path, parent: str, name: str, text: str, when: int | None = None) -> str:
    """A new commit: parent's tree plus one file; returns its sha (not on a branch)."""
    with Repo(str(repo)) as git:
        tree = git[git[parent.encode()].tree]
        blob = Blob.from_string(text.encode())
        git.object_store.add_object(blob)
        tree.add(name.encode(), 0o100644, blob.id)
        git.object_store.add_object(tree)
        commit = Commit()
        commit.tree, commit.parents = tree.id, [parent.encode()]
        commit.author = commit.committer = IDENTITY
        commit.author_time = commit.commit_time = int(time.time()) if when is None else when
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = b"the agent again\n"
        git.object_store.add_object(commit)
        return commit.id.decode()


def make_app(
    repo: Path, tmp: Path, backend: Backend | None = None, factory: Callable[[str], Backend] | None = None
) -> GatetuiApp:
    (tmp / "work").mkdir(exist_ok=True)
    backend = backend or LocalBackend(work_root=tmp / "work", layers=shared_layers())
    supervisor = Supervisor(repo, backend, Store.open(tmp / "state"), watcher=RefWatcher(repo, step_ms=20))
    return GatetuiApp(supervisor, factory)


async def wait_for(pilot: Pilot[None], predicate: Callable[[], bool], timeout: float = 150.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting for the screen"
        await pilot.pause(0.05)


def cell(pilot: Pilot[None], table: str, row: str, column: str) -> str:
    widget = pilot.app.screen.query_one(table, DataTable)
    return str(widget.get_cell(row, column)) if row in {str(k.value) for k in widget.rows} else ""


def column(pilot: Pilot[None], table: str, name: str) -> dict[str, str]:
    widget = pilot.app.screen.query_one(table, DataTable)
    return {str(k.value): str(widget.get_cell(k, name)) for k in widget.rows}


NOW = 1_767_300_000.0  # 2026-01-01T20:40Z

DETAILS = {
    "skip_marker": {
        "no_new_skips": '+ @pytest.mark.skip(reason="flaky") at tests/test_leap.py:19',
        "old_tests": "tests/test_leap.py::test_leap_day fails under base's tests; "
        "sealed files changed at head: tests/test_leap.py",
    },
    "loosened_assertion": {
        "old_tests": "tests/test_leap.py::test_leap_day fails under base's tests; "
        "sealed files changed at head: tests/test_leap.py"
    },
    "honest_fix": {},
    "toothless_test": {
        "bites": "10 of 12 mutants killed, 2 survived: calendarlib/core.py:12: return year % 4 == 0 "
        "and (year % 100 != 0 or year % 400 == 0)  ->  return year % 4 == 0 and "
        "(year % 100 != 0 or year % 401 == 0)\n"
        "survived: calendarlib/core.py:12: return year % 4 == 0 and (year % 100 != 0 or "
        "year % 400 == 0)  ->  return year % 4 == 0 and (year % 100 != 0 or year % 401 == 0)\n"
        "survived: calendarlib/core.py:12: return year % 4 == 0 and (year % 100 != 0 or "
        "year % 400 == 0)  ->  return year % 4 == 0 and (year % 100 != 0 or year % 400 == 1)"
    },
}

VERDICT = {"skip_marker": "fail", "loosened_assertion": "review", "honest_fix": "pass", "toothless_test": "review"}

MEASURED = {"honest_fix", "toothless_test"}  # samples whose head changes library code: covered and bites judge it

COST = Cost({"install": Usage(6.2, 4.1, 0.21), "runs": Usage(3.3, 2.9, 0.09), "old_tests": Usage(1.1, 0.9, 0.03)})


def record(name: str, head: str, base: str, sealed: tuple[str, ...]) -> dict[str, Any]:
    checks = []
    for check in CheckId:
        status = "skipped" if check is CheckId.HIDDEN else "pass"
        detail = "not configured" if check is CheckId.HIDDEN else DETAILS[name].get(check.value, "")
        if detail and check is not CheckId.HIDDEN:
            status = "review" if check is CheckId.BITES else "fail"
        if check in (CheckId.COVERED, CheckId.BITES) and name not in MEASURED:
            status, detail = "skipped", "no library line changed"
        checks.append(
            {
                "id": check.value,
                "title": check.title,
                "ok": status != "fail",
                "status": status,
                "detail": detail,
                "seconds": 4.5 if check in (CheckId.INSTALL, CheckId.RUNS) else 0.1,
            }
        )
    digests = Digests(base, head, "a1" * 32, ("b2" if sealed else "a1") * 32, sealed, "c3" * 32, ("pyproject.toml",))
    return {
        "run_id": f"run-{name}",
        "branch": f"agent/{name}",
        "head": head,
        "base": base,
        "verdict": VERDICT[name],
        "backend": "local",
        "checks": checks,
        "digests": digests.to_json(),
        "cost": COST.to_json(),
        "notes": [],
        "seconds": 11.4,
        "finished_at": NOW - 300,
    }


LAB_RULES = (
    RuleDigest("default", "review", False, "a1" * 32, "a1" * 32),
    RuleDigest("existing tests", "fail", True, "d4" * 32, "d4" * 32),
)


def recorded_lab() -> list[LabEvent]:
    """A lab half way: two scenarios as expected, one that differs (strict
    rules stop the honest fix), one running, one waiting."""
    chosen = ["honest_fix", "loosened_assertion", "section_version_bump", "skip_marker", "deleted_test"]
    scenarios = tuple(SCENARIOS[name] for name in chosen)
    honest, loosened, bump = scenarios[:3]
    changed = dataclasses.replace(LAB_RULES[1], head="e5" * 32, changed=("tests/test_leap.py",))
    want = lambda s: {**s.checks, "verdict": s.verdict}  # noqa: E731
    return [
        LabPlanned(scenarios),
        ScenarioStarted("honest_fix"),
        ScenarioStarted("loosened_assertion"),
        Outcome(loosened, want(loosened), (LAB_RULES[0], changed)),
        ScenarioStarted("section_version_bump"),
        Outcome(honest, {**want(honest), "old_tests": "fail", "verdict": "fail"}, (LAB_RULES[0], changed)),
        Outcome(bump, want(bump), LAB_RULES),
        ScenarioStarted("skip_marker"),
    ]


async def replay_lab(folder: Path, seal: object) -> AsyncIterator[LabEvent]:
    for event in recorded_lab():
        yield event


def workspaces(tmp: Path) -> list[str]:
    """Run folders the local backend left in its work root."""
    return sorted(p.name for p in (tmp / "work").iterdir() if p.name.startswith("gatetui-"))
