"""Every sample gated once per session, in surroundings an attacker would
want to reach: a supervisor state directory with a canary, secrets planted
in the supervisor's environment, a service on the host's loopback.

test_gate_samples.py checks each sample's statuses against its scenario;
test_attacks.py checks that no attack sample reached what it went for.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from gatetui.backends.local import LocalBackend
from gatetui.gate.events import GateEvent, OutputChunk
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from gatetui.lab.samples import Scenario, load_scenarios, materialize
from gatetui.stacks.registry import STACKS
from gatetui.supervise.store import Store

ALL_SCENARIOS = {s.name: s for s in load_scenarios()}
# A sample whose stack's programs this machine lacks (go, before `make tools`) is
# not gated; its tests are skipped with the reason (CI installs every one).
MISSING = {name: [p for p in STACKS[s.stack].needs if shutil.which(p) is None] for name, s in ALL_SCENARIOS.items()}
SCENARIOS = {name: s for name, s in ALL_SCENARIOS.items() if not MISSING[name]}
# Samples `make test` leaves to `make test-slow` (CI runs both tiers): what
# each shows is gated in `make test` too, on a repo of its own, by the test
# named beside it. The rest, and every attack the surroundings are checked
# against, are gated in `make test`.
LEFT_TO_CI = {
    "custom_editable": "tests/stacks/python/test_editable_check.py installs a project this way for real",
    "custom_editable_hook": "test_editable_check.py::test_a_hook_of_heads_own_that_is_not_setuptools_is_still_refused",
    "plugins_declared": "test_plugins_by_name.py::test_inside_every_run_the_runner_registered_the_verified_plugins_only",
    "wheel_differs": "test_wheel_tree.py::test_a_build_step_that_changes_the_wheel_asks_for_review",
    "attack_reads_the_mutant": "tests/gated/test_mutant_runs_gated.py gates its first variant",
    "honest_boundary": "test_survivors_gated.py::test_an_honest_boundary_whose_survivor_is_equivalent_passes",
    "go_vet_at_base": "test_go_vet.py::test_a_finding_base_already_has_is_told_not_failed_and_base_is_linted_once",
    "go_vet_added": "test_go_vet.py::test_a_finding_head_adds_fails_the_install_named",
    "go_hidden_honest": "go_hidden_special_case runs go's hidden tests and fails on them alone",
    "node_hidden_honest": "node_hidden_special_case runs node's hidden tests and fails on them alone",
}
SIDE_BY_SIDE = 3
SERVICE_PORTS = range(47611, 47631)  # attack_network's test calls every one
# Output kept per stream for the tests to read: attack_state_dir prints every
# file of its /tmp, the standard library's bytecode in its prefix too (~400 KB).
KEPT_PER_STREAM = 1 << 20
CANARY = "canary-7f3a9d0e51b2"


@dataclass
class Surroundings:
    state: Store
    state_files: dict[str, tuple[bytes, int]]  # path -> (content, mtime_ns) before gating
    service_hits: list[str] = field(default_factory=list)
    leaks: dict[str, list[str]] = field(default_factory=dict)  # sample -> chunks with the canary
    repo_digests: dict[str, tuple[str, str]] = field(default_factory=dict)  # before, after gating
    outliving: list[int] = field(default_factory=list)  # processes of a run's uid once every gate ended


@dataclass
class Gated:
    events: dict[str, list[GateEvent]]
    around: Surroundings
    root: Path  # the repos and the local backend's work root


def state_files(store: Store) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(store.root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(store.root.rglob("*"))
        if p.is_file()
    }


@contextmanager
def surroundings() -> Iterator[Surroundings]:
    folder = Path(tempfile.mkdtemp(prefix="gatetui-state-", dir="/var/tmp"))
    store = Store.open(folder)
    store.save_run("/srv/repo", {"run_id": "r1", "verdict": "fail", "secret": CANARY})
    store.key()
    try:
        yield Surroundings(store, state_files(store))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def planted_secrets() -> Iterator[None]:
    """The canary in the supervisor's environment, while the gates run only."""
    saved = {k: os.environ.get(k) for k in ("RUNTIME_API_KEY", "GATETUI_SUPERVISOR_SECRET")}
    os.environ.update(RUNTIME_API_KEY=CANARY, GATETUI_SUPERVISOR_SECRET=CANARY)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextmanager
def _service(hits: list[str]) -> Iterator[None]:
    """The loopback service attack_network wants to call; counts callers."""
    server = _listen()
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, peer = server.accept()
            except OSError:
                continue
            hits.append(str(peer))
            with conn:
                conn.sendall(b"ok\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        server.close()


def _listen() -> socket.socket:
    """The first free port of the range: two test sessions may run at once."""
    for port in SERVICE_PORTS:
        server = socket.socket()
        try:
            server.bind(("127.0.0.1", port))
        except OSError:
            server.close()
            continue
        server.listen()
        return server
    raise OSError(f"no free port in {SERVICE_PORTS} for the loopback service")


def by_tier(names: Iterable[str]) -> list[Any]:
    """Parameters of a test per sample: those left to CI marked slow."""
    return [pytest.param(n, marks=pytest.mark.slow) if n in LEFT_TO_CI else n for n in sorted(names)]


def wanted(items: Iterable[pytest.Item]) -> list[str]:
    """The samples of each tier whose tests were selected: `make test`
    gates its own, `make test-slow` those left to CI, a run of both all."""
    tiers = {
        item.get_closest_marker("slow") is not None
        for item in items
        if isinstance(item, pytest.Function) and "gated_samples" in item.fixturenames
    }
    return [name for name in SCENARIOS if (name in LEFT_TO_CI) in tiers]


def gate_all(root: Path, around: Surroundings, names: list[str]) -> dict[str, list[GateEvent]]:
    async def all_samples() -> dict[str, list[GateEvent]]:
        limit = asyncio.Semaphore(SIDE_BY_SIDE)
        events = await asyncio.gather(*(_gate(SCENARIOS[n], root, limit, around) for n in names))
        return dict(zip(names, events))

    with planted_secrets(), _service(around.service_hits):
        events = asyncio.run(all_samples())
    around.outliving = _outliving()
    return events


def _outliving(patience: float = 10.0) -> list[int]:
    """The run uids' processes left once every gate has ended, read then (a
    later test on this worker may start runs of its own), given the time a
    SIGKILL takes to land."""
    from tests.support.gating import gate_uid_pids

    deadline = time.monotonic() + patience
    while (left := gate_uid_pids()) and time.monotonic() < deadline:
        time.sleep(0.05)  # paces the polling; the deadline bounds it
    return left


async def _gate(scenario: Scenario, root: Path, limit: asyncio.Semaphore, around: Surroundings) -> list[GateEvent]:
    async with limit:
        repo = await asyncio.to_thread(materialize, scenario, root / scenario.name)
        before = await asyncio.to_thread(tree_digest, repo)
        request = GateRequest(
            repo, "main", f"agent/{scenario.name}", hidden=scenario.hidden_tests(), random_seed=scenario.random_seed
        )
        plan = await asyncio.to_thread(make_plan, request)
        kept: dict[str, int] = {}
        events: list[GateEvent] = []
        async for event in run_gate(plan, LocalBackend(work_root=root, layers=root / "layers")):
            if isinstance(event, OutputChunk):
                if CANARY in event.text:
                    around.leaks.setdefault(scenario.name, []).append(event.text[:500])
                if kept.get(event.stream, 0) > KEPT_PER_STREAM:
                    continue  # a flood is checked for leaks, not kept
                kept[event.stream] = kept.get(event.stream, 0) + len(event.text)
            events.append(event)
        around.repo_digests[scenario.name] = (before, await asyncio.to_thread(tree_digest, repo))
        return events


def tree_digest(folder: Path) -> str:
    """Every path, mode and byte under folder (the user's repo, .git included)."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        digest.update(f"{path.relative_to(folder)}\0{info.st_mode}\0".encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()


TOLD = re.compile(
    r"told apart: (?P<where>\S+:\d+): (?P<function>\w+)\((?P<year>-?\d+)\) gives (?P<here>\S+) here, "
    r"(?P<there>\S+) with `[^`]+`; no test checks it"
)


def assert_told_apart(lines: list[str], where: str, function: str, before: str, afters: list[str]) -> None:
    """One told-apart line per survivor, in order: its input a year, and the
    results it shows are what head's line and the mutant's give for it."""
    assert len(lines) == len(afters), lines
    for line, after in zip(lines, afters):
        found = TOLD.fullmatch(line) or pytest.fail(f"not a told-apart line: {line}")
        assert (found["where"], found["function"]) == (where, function)
        year = int(found["year"])
        here, there = (eval(code.removeprefix("return "), {"year": year}) for code in (before, after))  # noqa: S307
        assert (found["here"], found["there"]) == (str(here), str(there)) and here != there
