"""Which run the demo's pane shows: one that is gating or has just ended.

In a workshop every sample is replayed and two gates run at once, so the
branch that moved last is nearly always still queued: a pane that followed
it showed `waiting` rows while the verdicts went by unseen in the branch
list. The spotlight follows the newest run with something to show instead:
a verdict just given (for `hold` seconds, so the room can read it and its
scenario's notice), else the run that began gating last, else the newest
verdict. A queued run is never chosen. Plain Python: no Textual here, so the
rule is tested without a screen.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gatetui.supervise.run_states import RunState
from gatetui.supervise.runs import Branch, Run

HOLD = 8.0  # seconds a fresh verdict keeps the pane before a newer gate takes it


@dataclass
class Seen:
    """When the spotlight first saw a run in a phase (gating, or ended)."""

    call: int  # which call of `moved` first saw it: the order things happened in, as the screen heard them
    at: float


@dataclass
class Spotlight:
    hold: float = HOLD
    clock: Callable[[], float] = time.monotonic
    chosen: tuple[str, str, bool] | None = None  # (branch, run id, ended) last shown
    _seen: dict[tuple[str, bool], Seen] = field(default_factory=dict)
    _calls: itertools.count[int] = field(default_factory=itertools.count)

    def moved(self, branches: Iterable[Branch]) -> str | None:
        """The branch to show when the choice changed since the last call
        (a run began gating or ended, a verdict's hold ran out); None when it
        did not, so a person who looked elsewhere is left there meanwhile."""
        now, call = self.clock(), next(self._calls)
        best: tuple[tuple[int, int, float], tuple[str, str, bool]] | None = None
        for branch in branches:
            run = branch.latest
            if run is None or run.status == RunState.QUEUED:
                continue
            ended = not run.in_progress
            rank = self._rank(run, ended, now, call)
            if best is None or rank > best[0]:
                best = (rank, (branch.name, run.run_id, ended))
        if best is None or best[1] == self.chosen:
            return None
        self.chosen = best[1]
        return best[1][0]

    def _rank(self, run: Run, ended: bool, now: float, call: int) -> tuple[int, int, float]:
        """A fresh verdict first, then a run gating, then an older verdict;
        among equals the one seen last, then the one that started or
        ended last (runs from history are all first seen at once)."""
        seen = self._seen.setdefault((run.run_id, ended), Seen(call, now))
        if not ended:
            return 1, seen.call, run.started_at
        return (2 if now - seen.at < self.hold else 0), seen.call, run.finished_at or run.started_at
