"""Helpers for the TUI tests (no tests here): sample repos with the agent
branch held at base, an app over them, waiting on what the screen shows."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from dulwich.objects import Blob, Commit
from dulwich.repo import Repo
from textual.pilot import Pilot
from textual.widgets import DataTable

from gatetui.backends.base import Backend
from gatetui.backends.local import LocalBackend
from gatetui.lab.demo import move_branch
from gatetui.lab.samples import IDENTITY, load_scenarios, materialize
from gatetui.supervise.store import Store
from gatetui.supervise.supervisor import Supervisor
from gatetui.supervise.watch import RefWatcher
from gatetui.tui.app import GatetuiApp
from tests.gating import shared_layers

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
