"""Submitted commits, the submit cap, and escalation to a person.

Submitted commits (`gatetui submit`, through `serve.SubmitServer`) come from
the agent's own working copy, a clone or worktree: `gate_commit` fetches the
commit's objects from there into a private mirror in the state directory
(its objects borrowed from the supervised repo through git's alternates, so
nothing is ever written into the user's repository) and gates it there,
against base as the supervised repo has it. The submit after the cap is not
gated: `escalate` marks the branch and tells the consumers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

from gatetui.config import load_settings
from gatetui.errors import BadInput, GateError
from gatetui.git.repo import GitRepo
from gatetui.git.snapshot import Snapshot
from gatetui.supervise.events import EscalationRaised
from gatetui.supervise.mirror import fetch_commit
from gatetui.supervise.runs import Branch, Run
from gatetui.supervise.scope import Scope

SUBMIT_CAP = 3


class SubmitCap:
    """Submits per branch before a person takes over: `--cap` when given,
    else base's `submit_cap` as last read, else SUBMIT_CAP."""

    def __init__(self, scope: Scope, given: int | None = None):
        self.scope, self.given = scope, given
        self._at_base: tuple[str, int | None] | None = None  # (base sha, its submit_cap)

    @property
    def value(self) -> int:
        if self.given is not None:
            return self.given
        at_base = self._at_base[1] if self._at_base else None
        return SUBMIT_CAP if at_base is None else at_base

    def read(self) -> int:
        """Read base's `submit_cap` again (blocking: call it in a thread);
        a base that cannot be read or configured keeps the cap as it was,
        and its gate runs say what is wrong."""
        if self.given is None:
            with contextlib.suppress(GateError), GitRepo.open(self.scope.repo) as git:
                sha = git.resolve(self.scope.base)
                if self._at_base is None or self._at_base[0] != sha:
                    self._at_base = (sha, load_settings(Snapshot.of_commit(git, sha)).submit_cap)
        return self.value


class Submits:
    """Gates what the agent submits; `gate` is the supervisor's (it cancels the branch's run in progress)."""

    def __init__(self, scope: Scope, gate: Callable[[str], Run | None], cap: int | None = None):
        self.scope, self.gate, self.cap = scope, gate, SubmitCap(scope, cap)
        self._submitted: set[str] = set()  # submitted commits read into the mirror

    def source_of(self, sha: str) -> Path | None:
        """The mirror, for a commit read from the agent's copy; None: the supervised repo holds it."""
        return self.scope.mirror if sha in self._submitted else None

    async def gate_commit(self, name: str, sha: str, source: Path, as_uid: int | None = None) -> Run:
        """Gate commit `sha` of branch `name`, read from the agent's repo at
        `source` (a clone or worktree), with `as_uid`'s rights when given. A run of that very commit already
        under way or judged is returned instead of a new one. Raises BadInput
        when the branch is not watched, the commit cannot be read or holds
        nothing new."""
        self.check_branch(name)
        await asyncio.to_thread(self.fetch, Path(source), sha, as_uid)
        branch = self.scope.branches.setdefault(name, Branch(name, sha))
        branch.head, branch.at_base = sha, False
        if branch.has_run(sha):
            self.scope.branches_changed()
            return branch.runs[-1]
        run = self.gate(name)
        assert run is not None
        return run

    def check_branch(self, name: str) -> None:
        """Raise BadInput, saying how to name it, for a branch not supervised."""
        if not self.scope.supervises(name):
            raise BadInput(
                f"{name} is not a supervised branch: work on a branch named like "
                f"{self.scope.pattern.replace('*', 'fix-dates')}, then submit"
            )

    def fetch(self, source: Path, sha: str, as_uid: int | None = None) -> None:
        with self.scope.store.locked("mirror"):
            fetch_commit(self.scope.mirror, self.scope.repo, self.scope.base, source, sha, as_uid)
        self._submitted.add(sha)

    def used(self, name: str) -> int:
        return self.scope.store.submits_used(self.scope.repo, name)

    async def count(self, name: str) -> int:
        """A judged submit counts: stored first, then every screen told (a
        viewer's row would otherwise show the old figure until the branch
        next moves)."""
        used = await asyncio.to_thread(self.scope.store.count_submit, self.scope.repo, name)
        self.scope.branches_changed()
        return used

    def escalate(self, name: str, head: str, message: str) -> None:
        """The branch used up its submits: mark it and ask a person."""
        branch = self.scope.branches.setdefault(name, Branch(name, head))
        branch.escalated = True
        self.scope.store.set_escalated(self.scope.repo, name, True)
        self.scope.emit(EscalationRaised(name, message))
        self.scope.branches_changed()

    def give_back(self, name: str) -> None:
        """A person took over: the branch's submits start again from none."""
        self.scope.store.reset_submits(self.scope.repo, name)
        self.scope.store.set_escalated(self.scope.repo, name, False)
        branch = self.scope.branches.get(name)
        if branch is not None:
            branch.escalated = False
        self.scope.branches_changed()
