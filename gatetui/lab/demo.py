"""`gatetui demo`: every sample gated, each cheat caught.

In a terminal the TUI opens on one workshop repository and each sample's
agent commit is replayed onto its branch as soon as the gate has a slot for
it, so the audience watches each one caught live (`write_workshop`, `replay`). Without a TTY (CI,
a projector fed by a pipe) every sample is gated in turn and the verdicts are
printed as plain text (`run_demo`).
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from dulwich.objects import Blob, ObjectID, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from gatetui.backends.choose import choose_backend
from gatetui.errors import BadInput, ExitCode, GateError
from gatetui.gate.api import gate_once, gate_request
from gatetui.gate.render import verdict_block
from gatetui.inert import inert_line
from gatetui.lab.rules import scenario_inputs
from gatetui.lab.samples import (
    BASE_TIME,
    HEAD_TIME,
    IDENTITY,
    MAIN_REF,
    SAMPLES_DIR,
    SampleError,
    _commit,
    _set_ref,
    _store_tree,
    load_scenarios,
    write_all,
)
from gatetui.supervise.store import Store
from gatetui.supervise.supervisor import Supervisor


def run_demo(dest: Path, out: TextIO, err: TextIO) -> int:
    try:
        written = write_all(dest)
    except SampleError as error:
        raise BadInput(str(error)) from None
    mismatches = 0
    for scenario, path in written:
        print(f"\n== {scenario.name}: {scenario.title}\n   {scenario.story}", file=out, flush=True)
        request = gate_request(path, "main", scenario.branch, scenario_inputs(scenario))
        try:
            _, finished = asyncio.run(gate_once(request, choose_backend("local"), io.StringIO()))
        except GateError as error:
            print(f"   gatetui: {inert_line(str(error))}", file=out)
            mismatches += 1
            continue
        print("   " + verdict_block(finished).replace("\n", "\n   "), file=out)
        if finished.verdict.value != scenario.verdict:
            mismatches += 1
            print(f"   (the scenario expects {scenario.verdict})", file=out)
    print(f"\n{len(written)} samples gated, {mismatches} differ from their scenario", file=err)
    return ExitCode.PASS if mismatches == 0 else ExitCode.FAIL


# --- the live demo: one workshop repo, each agent commit replayed onto its branch ---

WORKSHOP_NOTE = b"""gatetui workshop repository

Each sample's base is a parent of `main`; each `agent/NAME` branch starts at
its sample's base, and `gatetui demo` moves it to the agent's commit.
"""


@dataclass(frozen=True)
class Workshop:
    repo: Path
    moves: list[tuple[str, str]]  # (branch, the agent's head commit), in replay order
    stories: dict[str, str] = field(default_factory=dict)  # branch -> what its scenario does, shown by its verdict
    expects: dict[str, str] = field(default_factory=dict)  # branch -> the verdict its scenario expects


def write_workshop(dest: Path, root: Path = SAMPLES_DIR) -> Workshop:
    """One repo holding every sample: `main` merges every sample's base, and
    `agent/NAME` points at NAME's base, so nothing is judged until a replay
    moves the branch to the agent's commit (the diff is from the merge base:
    exactly the sample's change). Commits are the samples' own, fixed shas."""
    scenarios = load_scenarios(root)
    if dest.exists() and any(dest.iterdir()):
        raise BadInput(f"{dest}: not empty; the demo writes its repo only to a new or empty folder")
    dest.mkdir(parents=True, exist_ok=True)
    repo = Repo.init(str(dest))
    try:
        store, bases, moves = repo.object_store, [], []
        for s in scenarios:
            base = _commit(
                store,
                _store_tree(store, s.base_dir),
                [],
                BASE_TIME,
                f"{s.name}: base\n\nThe code before the agent's change.\n",
            )
            head = _commit(
                store, _store_tree(store, s.head_dir, s.head_names), [base], HEAD_TIME, f"{s.title}\n\n{s.story}\n"
            )
            bases.append(base)
            moves.append((s.branch, head.decode("ascii")))
            _set_ref(repo, Ref(f"refs/heads/{s.branch}".encode()), base, BASE_TIME)
        note = Blob.from_string(WORKSHOP_NOTE)
        store.add_object(note)
        tree = Tree()
        tree.add(b"README", 0o100644, note.id)
        store.add_object(tree)
        main = _commit(store, tree.id, bases, BASE_TIME + 60, "workshop: every sample's base\n")
        _set_ref(repo, MAIN_REF, main, BASE_TIME + 60)
        repo.refs.set_symbolic_ref(Ref(b"HEAD"), MAIN_REF)
    finally:
        repo.close()
    return Workshop(
        dest, moves, {s.branch: f"{s.title}: {s.story}" for s in scenarios}, {s.branch: s.verdict for s in scenarios}
    )


def install_hidden(workshop: Workshop, store: Store, root: Path = SAMPLES_DIR) -> int:
    """Put every sample's hidden tests in the workshop's state directory,
    where the supervisor reads them (each sample's base names its own
    subfolder, so one sample's hidden tests never judge another's branch)."""
    written = 0
    for scenario in load_scenarios(root):
        for rel, data in scenario.hidden_tests().items():
            store.write_atomic(store.hidden_dir(workshop.repo).relative_to(store.root) / rel, data)
            written += 1
    return written


def move_branch(repo: Path, branch: str, sha: str) -> None:
    """Point `branch` at `sha` in a repo of ours (the workshop), with a reflog line."""
    with Repo(str(repo)) as git:
        git.refs.set_if_equals(
            Ref(f"refs/heads/{branch}".encode()),
            None,
            ObjectID(sha.encode()),
            committer=IDENTITY,
            message=b"gatetui demo: the agent commits",
        )


async def replay(
    workshop: Workshop,
    interval: float,
    first_after: float = 2.0,
    moved: Callable[[str, str], None] | None = None,
    pace: Supervisor | None = None,
) -> None:
    """Move each agent branch to its head, at least `interval` seconds apart;
    `moved(branch, story)` is told of each (the TUI notes its story).

    With `pace` (the supervisor gating the workshop) a branch moves only
    when a gate slot is free, and the next waits until the supervisor has
    seen the move: moved faster than the gate judges, the branches would
    only pile up `queued`, and the room would watch rows that wait."""
    loop = asyncio.get_running_loop()
    await asyncio.sleep(first_after)
    last: float | None = None
    for branch, sha in workshop.moves:
        if pace is not None:
            await slot_free(pace)
        if last is not None:
            await asyncio.sleep(max(0.0, last + interval - loop.time()))
        await asyncio.to_thread(move_branch, workshop.repo, branch, sha)
        last = loop.time()
        if moved is not None:
            moved(branch, workshop.stories.get(branch, ""))
        if pace is not None:
            await seen_at(pace, branch, sha)


async def slot_free(supervisor: Supervisor) -> None:
    """Until fewer runs are under way than the supervisor gates at once."""
    await until_told(supervisor, lambda: gates_under_way(supervisor) < supervisor.parallel)


async def seen_at(supervisor: Supervisor, branch: str, sha: str) -> None:
    """Until the supervisor has seen `branch` at `sha` (and so queued its run)."""

    def seen() -> bool:
        known = supervisor.branches.get(branch)
        return known is not None and known.head == sha

    await until_told(supervisor, seen)


def gates_under_way(supervisor: Supervisor) -> int:
    """Runs queued or gating: what holds or waits for one of the supervisor's slots."""
    return sum(1 for b in supervisor.branches.values() for r in b.runs if r.in_progress)


async def until_told(supervisor: Supervisor, holds: Callable[[], bool]) -> None:
    """Until `holds()`, looked at again each time the supervisor says something changed."""
    changed = asyncio.Event()
    unsubscribe = supervisor.subscribe(lambda _: changed.set())
    try:
        while not holds():
            changed.clear()
            await changed.wait()
    finally:
        unsubscribe()
