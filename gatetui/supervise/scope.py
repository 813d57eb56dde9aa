"""What every job of the supervisor shares, held once.

The jobs (queue, gating, submits, reviews, watching) each take the one
`Scope` (the Supervisor is one) and read it as they act, never a copy: a
backend switched with `b`, a clock a test sets, a pattern changed before
start reach them all at once. A job imports this module, never the
supervisor's: the jobs stay below the class that puts them together.
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from gatetui.backends.base import Backend
from gatetui.gate.events import GateEvent, RunFinished, RunStarted
from gatetui.git.repo import GitRepo
from gatetui.supervise.events import BranchesChanged, Listeners, RunUpdated, SupervisorEvent
from gatetui.supervise.ref_watcher import RefWatcher
from gatetui.supervise.runs import Branch, Run
from gatetui.supervise.store import Store

T = TypeVar("T")


@dataclass(eq=False)  # a supervisor is itself, not its fields' values
class Scope:
    repo: Path  # resolved: the store keys the repo by its real path
    store: Store
    backend: Backend  # the one runs started from now on use
    watcher: RefWatcher
    base: str = "main"
    pattern: str = "agent/*"
    timeout: float | None = None  # per command; None: the profile's
    clock: Callable[[], float] = time.time
    branches: dict[str, Branch] = field(default_factory=dict)
    listeners: Listeners = field(default_factory=Listeners)
    started_at: float = 0.0  # what "cost since start" counts from

    def emit(self, event: SupervisorEvent) -> None:
        self.listeners.emit(event)

    def branches_changed(self) -> None:
        self.emit(BranchesChanged())

    def base_sha(self) -> str:
        """Raise BadInput when the repo or base cannot be read; base's sha."""
        with GitRepo.open(self.repo) as git:
            return git.resolve(self.base)

    def supervises(self, name: str) -> bool:
        return fnmatch.fnmatchcase(name, self.pattern)

    @property
    def mirror(self) -> Path:
        """Where submitted commits' objects are kept: in the 0700 state directory."""
        return self.store.repo_dir(self.repo) / "mirror.git"

    def apply(self, run: Run, event: GateEvent) -> None:
        """Fold a gate event into `run` and tell the listeners (live runs
        call this; a replay or a test can feed recorded events the same way)."""
        run.apply(event, self.clock())
        self.emit(RunUpdated(run.branch, run.run_id, event))
        if isinstance(event, (RunStarted, RunFinished)):
            self.branches_changed()
