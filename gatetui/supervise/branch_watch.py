"""Watching the supervised branches: what is there at start, and each move.

At start the history is loaded (each branch with its kept runs, and branches
known only from their submits), every head that has no run is gated, and
then the watcher's moves are acted on: a new head is gated (unless a submit
gated it already), a head that is part of base waits, a deleted branch goes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from gatetui.git.repo import GitRepo
from gatetui.supervise.queue import Cancellable, Launcher
from gatetui.supervise.ref_watcher import Moves
from gatetui.supervise.runs import Branch, Run
from gatetui.supervise.scope import Scope


class BranchWatch:
    """`gate` and `cancel` are the supervisor's: they reach the run queue."""

    def __init__(self, scope: Scope, gate: Callable[[str], Run | None], cancel: Callable[[str], bool]):
        self.scope, self.gate, self.cancel = scope, gate, cancel
        self._stop = asyncio.Event()
        self._watching: Cancellable | None = None

    async def start(self, launch: Launcher) -> None:
        """Load the history, gate heads that have no run yet, then watch."""
        heads = await asyncio.to_thread(self.scope.watcher.read)
        await self._load(heads)
        self.scope.branches_changed()
        for branch in self.scope.branches.values():
            if not branch.at_base and not any(
                r.head == branch.head and not r.stopped  # kept, not a verdict
                for r in branch.runs
            ):
                self.gate(branch.name)
        self._watching = launch("watch", self._watch(heads))

    def stop(self) -> None:
        self._stop.set()
        if self._watching is not None:
            self._watching.cancel()

    async def _load(self, heads: dict[str, str]) -> None:
        store, repo = self.scope.store, self.scope.repo
        records = await asyncio.to_thread(store.runs, repo)
        escalated = await asyncio.to_thread(store.escalated, repo)
        at_base = await asyncio.to_thread(self._part_of_base, heads.values())
        for name, sha in heads.items():
            branch = self.scope.branches[name] = Branch(name, sha, sha in at_base)
            branch.runs = [Run.from_record(r) for r in records if r.get("branch") == name]
            branch.escalated = name in escalated
        for name, runs in self._submitted_only(records, heads).items():
            branch = self.scope.branches[name] = Branch(name, runs[-1].head, runs=runs)
            branch.escalated = name in escalated

    def _submitted_only(self, records: list[dict[str, Any]], heads: Mapping[str, str]) -> dict[str, list[Run]]:
        """Branches known only from their submits (the agent's clone holds
        them, the supervised repo does not): shown with their kept runs,
        their head the last commit submitted. Not gated again at start: the
        agent submits what it wants judged."""
        found: dict[str, list[Run]] = {}
        for record in records:
            name = str(record.get("branch", ""))
            if name and name not in heads and self.scope.supervises(name):
                found.setdefault(name, []).append(Run.from_record(record))
        return found

    async def _watch(self, heads: dict[str, str]) -> None:
        async for moves in self.scope.watcher.moves(heads, self._stop):
            await self.apply_moves(moves)

    async def apply_moves(self, moves: Moves) -> None:
        """Act on branch moves (from the watcher, or a caller that knows)."""
        live = [sha for sha in moves.values() if sha is not None]
        at_base = await asyncio.to_thread(self._part_of_base, live)
        for name, sha in moves.items():
            if sha is None:
                self.cancel(name)
                self.scope.branches.pop(name, None)
                continue
            branch = self.scope.branches.setdefault(name, Branch(name, sha))
            branch.head, branch.at_base = sha, sha in at_base
            if branch.at_base:
                self.cancel(name)
            elif not branch.has_run(sha):  # a submit may have gated it already
                self.gate(name)
        self.scope.branches_changed()

    def _part_of_base(self, heads: Iterable[str]) -> set[str]:
        with GitRepo.open(self.scope.repo) as git:
            tip = git.resolve(self.scope.base)
            return {h for h in heads if h == tip or git.merge_base(tip, h) == h}
