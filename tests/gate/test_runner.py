"""The runner's guarantees that no sample shows: a run stopped midway leaves
nothing behind, and a suite that hangs is stopped at its time limit."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest

from gatetui.backends.local import LocalBackend
from gatetui.backends.uids import uid_processes
from gatetui.gate.checks import CheckId, Status
from gatetui.gate.events import OutputChunk, RunFinished
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from tests.support.gating import shared_layers
from tests.support.repos import MakeRepo

LOCK = '{"name": "n", "version": "0.0.0", "lockfileVersion": 3, "requires": true, "packages": {"": {"name": "n", "version": "0.0.0"}}}\n'


def node_repo(make_repo: MakeRepo, test_body: str) -> Path:
    base = {
        "package.json": '{"name": "n", "version": "0.0.0", "scripts": {"test": "node --test"}}\n',
        "package-lock.json": LOCK,
        "test/a.test.js": "const test = require('node:test');\ntest('a', () => {});\n",
    }
    return make_repo(base, {"test/a.test.js": "const test = require('node:test');\n" + test_body})


def running(pid: int) -> bool:
    """Alive and not a zombie waiting for its reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.sandbox
@pytest.mark.install
@pytest.mark.parametrize("isolate", [False, None], ids=["plain", "isolated-if-possible"])
def test_a_run_stopped_midway_leaves_no_process_and_no_directory(
    make_repo: MakeRepo, tmp_path: Path, isolate: bool | None
) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    repo = node_repo(
        make_repo,
        (
            "const fs = require('node:fs');\n"
            f"test('a', async () => {{ try {{ fs.writeFileSync('{pids}/' + process.pid, ''); }} catch {{}} "
            "await new Promise(r => setTimeout(r, 60000)); });\n"
        ),
    )
    work = tmp_path / "work"
    work.mkdir()
    backend = LocalBackend(work_root=work, isolate=isolate)
    seen: list[int] = []

    def started() -> list[int]:
        if backend.isolation.separate_uid:  # the run cannot write to tmp_path: look for its uids
            # this backend's own claims: another test session's runs are not this run's processes
            claims = [int(c.name) for c in (work / ".uids").glob("[0-9]*")]
            return [pid for uid in claims for pid in uid_processes(uid)]
        return [int(p.name) for p in pids.iterdir()]

    async def go() -> None:
        plan = make_plan(GateRequest(repo, "main", "agent/x"))
        gate = run_gate(plan, backend)
        async for event in gate:
            if isinstance(event, OutputChunk) and event.stream == "run 1":
                deadline = time.monotonic() + 20
                while len(started()) < 3 and time.monotonic() < deadline:
                    await asyncio.sleep(0.1)
                seen.extend(started())
                break
        await gate.aclose()

    asyncio.run(go())
    assert len(seen) >= 3, f"the suite's 3 runs had not all started within 20 s of run 1's first output: {seen}"
    deadline = time.monotonic() + 5  # SIGKILL is delivered asynchronously
    while (alive := [pid for pid in seen if running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive == [], f"the runs' processes {alive} still ran 5 s after the gate was closed"
    assert [p.name for p in work.iterdir() if p.name != ".uids"] == []
    assert list((work / ".uids").glob("*")) == []


@pytest.mark.sandbox
@pytest.mark.install
def test_a_hanging_suite_fails_runs_at_the_time_limit(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = node_repo(make_repo, "test('a', async () => { await new Promise(r => setTimeout(r, 60000)); });\n")

    async def go() -> RunFinished:
        plan = make_plan(GateRequest(repo, "main", "agent/x", timeout=4))
        events = [e async for e in run_gate(plan, LocalBackend(work_root=tmp_path, layers=shared_layers()))]
        assert isinstance(events[-1], RunFinished)
        return events[-1]

    started = time.monotonic()
    done = asyncio.run(go())
    results = {r.id: r for r in done.results}
    assert results[CheckId.RUNS].status is Status.FAIL
    assert "run 1 stopped at its time limit after 4 s" in results[CheckId.RUNS].detail
    assert results[CheckId.INSTALL].status is Status.PASS
    assert time.monotonic() - started < 30


# --- an install that fails: the change's fault only if base installs ----------------

# package.json names a dependency the lock file lacks: `npm ci` refuses at once, offline.
OUT_OF_SYNC = (
    '{"name": "n", "version": "0.0.0", "scripts": {"test": "node --test"}, "dependencies": {"left-pad": "1.3.0"}}\n'
)
NODE_BASE = {
    "package.json": '{"name": "n", "version": "0.0.0", "scripts": {"test": "node --test"}}\n',
    "package-lock.json": LOCK,
    "test/a.test.js": "const test = require('node:test');\ntest('a', () => {});\n",
}


def gate_install(repo: Path, work: Path) -> tuple[RunFinished, list[str]]:
    async def go() -> tuple[RunFinished, list[str]]:
        plan = make_plan(GateRequest(repo, "main", "agent/x"))
        events = [e async for e in run_gate(plan, LocalBackend(work_root=work, layers=shared_layers()))]
        assert isinstance(events[-1], RunFinished)
        return events[-1], [e.stream for e in events if isinstance(e, OutputChunk) and e.check is CheckId.INSTALL]

    return asyncio.run(go())


@pytest.mark.sandbox
@pytest.mark.install
def test_an_install_base_fails_too_is_an_error_not_the_changes(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo(
        {**NODE_BASE, "package.json": OUT_OF_SYNC},
        {"test/a.test.js": NODE_BASE["test/a.test.js"] + "test('b', () => {});\n"},
    )
    done, streams = gate_install(repo, tmp_path / "work")
    install = {r.id: r for r in done.results}[CheckId.INSTALL]
    assert (done.verdict.value, install.status) == ("error", Status.ERROR)
    assert install.detail.startswith("`npm ci --no-audit --no-fund --ignore-scripts` failed (exit code 1): ")
    assert install.detail.endswith(
        "; base fails the same install, so it is the project or this machine, "
        "not this change: make base install, then gate again"
    )
    assert sorted(set(streams)) == ["base install", "install"]


@pytest.mark.sandbox
@pytest.mark.install
def test_an_install_only_head_breaks_is_the_changes_fault(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo(NODE_BASE, {"package.json": OUT_OF_SYNC})
    done, streams = gate_install(repo, tmp_path / "work")
    install = {r.id: r for r in done.results}[CheckId.INSTALL]
    assert (done.verdict.value, install.status) == ("fail", Status.FAIL)
    assert install.detail.startswith("`npm ci --no-audit --no-fund --ignore-scripts` failed (exit code 1): ")
    assert install.detail.endswith("; base installs")
    assert sorted(set(streams)) == ["base install", "install"]
    assert [p.name for p in (tmp_path / "work").iterdir() if p.name != ".uids"] == []  # base's workspace too


def test_a_timed_out_command_is_described_by_its_limit_not_the_clock() -> None:
    """A loaded machine kills it at 21.4 s: the detail still says the limit."""
    from gatetui.backends.base import CommandResult

    late = CommandResult(None, 21.4, timed_out=True, limit_seconds=20)
    assert late.describe_end() == "stopped at its time limit after 20 s"
    assert CommandResult(None, 21.4, timed_out=True).describe_end() == "stopped at its time limit after 21 s"


PYTHON_BASE = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "reqlib"\nversion = "1.0"\n[tool.setuptools]\npackages = ["reqlib"]\n'
    ),
    # tox names a requirements file the tree does not hold (a release's sdist that left it out)
    "tox.ini": "[testenv]\ndeps = -rrequirements-test.txt\ncommands = pytest\n",
    "reqlib/__init__.py": "def one():\n    return 1\n",
    "tests/test_one.py": "from reqlib import one\n\n\ndef test_one():\n    assert one() == 1\n",
}


@pytest.mark.sandbox
@pytest.mark.install
def test_a_gate_step_that_fails_is_named_by_what_it_does_not_its_shell(make_repo: MakeRepo, tmp_path: Path) -> None:
    """The gate's own resolve runs a page of shell; its failure says which
    step it was, in one line a person can act on."""
    repo = make_repo(PYTHON_BASE, {"reqlib/__init__.py": "def one():\n    return 0 + 1\n"})
    done, _ = gate_install(repo, tmp_path / "work")
    install = {r.id: r for r in done.results}[CheckId.INSTALL]
    assert (done.verdict.value, install.status) == ("error", Status.ERROR)
    said, _, blamed = install.detail.partition("; ")
    assert re.fullmatch(
        r"the dependency resolve failed \(exit code 1\): ERROR: Could not open requirements file: "
        r"\[Errno 2\] No such file or directory: '(/[^']*/)?requirements-test\.txt'",
        said,
    ), said
    assert blamed.startswith("base fails the same install")


@pytest.mark.sandbox
@pytest.mark.install
def test_a_node_project_that_keeps_no_lock_installs_from_package_json(make_repo: MakeRepo, tmp_path: Path) -> None:
    """Many libraries keep package-lock.json out of git: npm ci alone
    refuses to start, so every change of theirs was an error."""
    base = {
        "package.json": OUT_OF_SYNC,
        "index.js": "module.exports = require('left-pad');\n",
        "test/a.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
        "const pad = require('..');\ntest('pads', () => assert.equal(pad('1', 3, '0'), '001'));\n",
    }
    repo = make_repo(base, {"test/b.test.js": "const test = require('node:test');\ntest('b', () => {});\n"})
    done, _ = gate_install(repo, tmp_path / "work")
    said = {r.id.value: f"{r.status.value}: {r.detail}" for r in done.results}
    assert (done.verdict.value, said["install"], said["runs"]) == (
        "pass",
        "pass: fresh copy, fresh environment",
        "pass: 3 of 3 runs passed",
    ), said
