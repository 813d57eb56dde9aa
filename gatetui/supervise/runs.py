"""What the supervisor knows of branches and runs: the records the TUI and
`gatetui serve` read back after each `SupervisorEvent`.

A `Run` folds the gate's events (`apply`) into check rows, capped logs,
digests and cost; `Run.from_record` rebuilds one from the store's history,
so a restart shows what was there. Its state moves only through `move_to`,
by the table in `states`. No Textual here.
"""

from __future__ import annotations

import contextlib
import difflib
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gatetui.gate.checks import CHECK_ORDER, CheckId, CheckResult, Status
from gatetui.gate.cost import Cost, Usage
from gatetui.gate.events import (
    CheckFinished,
    CheckProgress,
    CheckStarted,
    CostUpdated,
    DigestsComputed,
    GateEvent,
    OutputChunk,
    RunFinished,
    RunStarted,
)
from gatetui.gate.sealing.digests import Digests, RuleDigest
from gatetui.supervise.run_states import RunState

LOG_LINES = 10_000  # lines kept per check in memory; the store keeps the full log (capped)


# --- state -------------------------------------------------------------------


class LogBuffer:
    """The last `cap` lines of a check's output; older ones are counted, not kept."""

    def __init__(self, cap: int = LOG_LINES):
        self.lines: deque[str] = deque(maxlen=cap)
        self.total = 0  # complete lines ever appended
        self._partial: dict[str, str] = {}

    @property
    def dropped(self) -> int:
        return self.total - len(self.lines)

    def append(self, stream: str, text: str) -> None:
        text = self._partial.pop(stream, "") + text
        parts = text.split("\n")
        if parts[-1]:
            self._partial[stream] = parts[-1]
        prefix = f"{stream} | "
        for line in parts[:-1]:
            self.lines.append(prefix + line)
        self.total += len(parts) - 1

    def since(self, seen: int) -> tuple[list[str], bool]:
        """Lines after the first `seen`; True when some of them were dropped
        (the reader should start over from what is kept)."""
        new = self.total - seen
        if new <= 0:
            return [], False
        if new > len(self.lines):
            return list(self.lines), True
        return list(self.lines)[-new:], False


@dataclass
class CheckRow:
    check: CheckId
    status: Status = Status.WAITING
    detail: str = ""
    started: float | None = None  # wall clock
    seconds: float | None = None

    def elapsed(self, now: float) -> float | None:
        if self.seconds is not None:
            return self.seconds
        return None if self.started is None else max(0.0, now - self.started)


@dataclass
class Run:
    """One gate run of a branch: live, or read back from the store."""

    run_id: str
    branch: str
    head: str
    status: RunState = RunState.QUEUED
    base: str = ""
    backend: str = ""
    started_at: float = 0.0
    finished_at: float | None = None
    seconds: float | None = None
    checks: dict[CheckId, CheckRow] = field(default_factory=lambda: {c: CheckRow(c) for c in CHECK_ORDER})
    digests: Digests | None = None
    cost: Cost = field(default_factory=Cost)
    notes: tuple[str, ...] = ()
    message: str = ""  # why the gate could not run
    seal: str = ""
    review: str = ""  # accepted / rejected, once a person decided
    logs: dict[CheckId, LogBuffer] = field(default_factory=dict)
    record: dict[str, Any] | None = None
    stopped: bool = False  # ended without a verdict (an error before one, a cancel)

    def __post_init__(self) -> None:
        self.status = RunState(self.status)  # a state given by its text (a test, a replay) is the state

    @property
    def in_progress(self) -> bool:
        return RunState(self.status).in_progress

    def move_to(self, state: RunState) -> None:
        """How the supervisor changes a run's state: a move `states.TRANSITIONS` does
        not allow raises IllegalTransition (a bug, never the agent's)."""
        self.status = RunState(self.status).to(state)

    def log(self, check: CheckId) -> LogBuffer:
        return self.logs.setdefault(check, LogBuffer())

    def apply(self, event: GateEvent, now: float) -> None:
        """Fold one gate event into the run."""
        match event:
            case RunStarted():
                self.move_to(RunState.RUNNING)
                self.base, self.backend, self.notes = event.base, event.backend, event.notes
            case CheckStarted():
                row = self.checks[event.check]
                row.status, row.started = Status.RUNNING, now
            case CheckProgress():
                self.checks[event.check].detail = event.detail
            case OutputChunk():
                self.log(event.check).append(event.stream, event.text)
            case CheckFinished():
                r = event.result
                row = self.checks[r.id]
                row.status, row.detail, row.seconds = r.status, r.detail, r.seconds
            case DigestsComputed():
                self.digests = event.digests
            case CostUpdated():
                self.cost = event.cost
            case RunFinished():
                self.move_to(RunState.of_verdict(event.verdict))
                self.cost, self.digests = event.cost, event.digests
                self.seconds, self.finished_at = event.seconds, now

    def stop(self, status: RunState, message: str, now: float) -> None:
        """The run ended without a verdict. After an error no check is left
        waiting or running: each says it was not judged, and why. After a
        cancel the rows keep where they were (what the diff checks had said
        so far), and every unfinished one reads `cancelled`."""
        self.move_to(status)
        self.message, self.stopped = message or self.message, True
        self.finished_at = self.finished_at or now
        self.seconds = self.seconds if self.seconds is not None else max(0.0, now - (self.started_at or now))
        if status == RunState.CANCELLED:
            return
        for row in self.checks.values():
            if not row.status.final:
                row.status, row.detail = Status.ERROR, f"not judged: the gate stopped ({self.message})"

    def stopped_record(self, repo: str) -> dict[str, Any]:
        """What the store keeps of a run that ended without a verdict: it is
        shown after a restart like any other."""
        return {
            "run_id": self.run_id,
            "repo": repo,
            "branch": self.branch,
            "verdict": self.status,
            "stopped": True,
            "message": self.message,
            "base": self.base,
            "head": self.head,
            "backend": self.backend,
            "checks": [
                {
                    "id": r.check.value,
                    "title": r.check.title,
                    "ok": r.status in (Status.PASS, Status.SKIPPED),
                    "status": r.status.value,
                    "detail": r.detail,
                    "seconds": r.seconds,
                }
                for r in self.checks.values()
            ],
            "digests": self.digests.to_json() if self.digests is not None else {},
            "cost": self.cost.to_json(),
            "notes": list(self.notes),
            "seconds": self.seconds,
            "finished_at": self.finished_at,
        }

    def results(self) -> list[CheckResult]:
        return [
            CheckResult(r.check, r.status, r.detail, r.seconds or 0.0) for r in self.checks.values() if r.status.final
        ]

    def verdict_block(self) -> str:
        """The verdict block: one line per check, then the verdict."""
        lines = [r.line() for r in self.results()]
        return "\n".join([*lines, f"verdict: {self.status}"])

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Run:
        run = cls(
            run_id=str(record["run_id"]),
            branch=str(record.get("branch", "")),
            head=str(record.get("head", "")),
            status=RunState.of_record(record.get("verdict", "error")),
            base=str(record.get("base", "")),
            backend=str(record.get("backend", "")),
            finished_at=record.get("finished_at"),
            seconds=record.get("seconds"),
            notes=tuple(record.get("notes", ())),
            seal=str(record.get("seal", "")),
            review=str((record.get("review") or {}).get("decision", "")),
            record=record,
            message=str(record.get("message", "")),
            stopped=record.get("stopped") is True,
        )
        run.started_at = (run.finished_at or 0.0) - (run.seconds or 0.0)
        for item in record.get("checks", []):
            with contextlib.suppress(ValueError, KeyError):
                check = CheckId(item["id"])
                run.checks[check] = CheckRow(
                    check, Status(item["status"]), item.get("detail", ""), None, item.get("seconds")
                )
        run.digests = digests_from_json(record.get("digests") or {})
        run.cost = cost_from_json(record.get("cost") or {})
        return run


@dataclass
class Branch:
    name: str
    head: str
    at_base: bool = False  # head is part of base: nothing to judge yet
    runs: list[Run] = field(default_factory=list)  # oldest first
    escalated: bool = False  # the submit cap was reached: a person takes over

    @property
    def latest(self) -> Run | None:
        return self.runs[-1] if self.runs else None

    def find(self, run_id: str) -> Run | None:
        return next((r for r in self.runs if r.run_id == run_id), None)

    def has_run(self, sha: str) -> bool:
        """Whether the latest run answers for `sha` (under way, or judged
        other than an error): a move or a submit of it is not gated again."""
        latest = self.latest
        return latest is not None and latest.head == sha and RunState(latest.status).answers_for_head

    @property
    def judged(self) -> Run | None:
        """The latest run that ended with a verdict."""
        for run in reversed(self.runs):
            if RunState(run.status).judged:
                return run
        return None

    @property
    def stale(self) -> bool:
        judged = self.judged
        return judged is not None and judged.head != self.head

    @property
    def status(self) -> str:
        """What the branch list shows: running, queued, the verdict (a
        review a person decided: accepted or rejected), or why none."""
        latest = self.latest
        if latest is not None and latest.in_progress:
            return latest.status
        judged = self.judged
        if judged is not None:
            if self.stale:
                return "stale"
            return judged.review if judged.status == RunState.REVIEW and judged.review else judged.status
        return "at base" if self.at_base else "no run"


@dataclass(frozen=True)
class ReviewFile:
    """A file head changed that a person should read: both versions, and
    what `covered` and `bites` found on head's lines (line -> notes)."""

    path: str
    base: str | None  # None: absent at base (added by the agent)
    head: str | None  # None: deleted at head
    notes: Mapping[int, tuple[str, ...]] = field(default_factory=dict, compare=False)

    def opcodes(self) -> list[tuple[str, int, int, int, int]]:
        a = (self.base or "").splitlines()
        b = (self.head or "").splitlines()
        return [
            (str(tag), i1, i2, j1, j2)
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        ]


def cost_since(branches: Iterable[Branch], since: float) -> Usage:
    """What the runs started since `since` cost, together (the credit table's total)."""
    total = Usage()
    for branch in branches:
        for run in branch.runs:
            if run.started_at >= since:
                total = total + run.cost.total
    return total


def digests_from_json(data: dict[str, Any]) -> Digests | None:
    """A record's digests back as `Digests`, as the run had them."""
    if not data.get("head"):
        return None
    sealed, manifest = data.get("sealed") or {}, data.get("manifest") or {}
    hidden, seed = data.get("hidden") or {}, data.get("random_seed")
    return Digests(
        data.get("base", ""),
        data["head"],
        sealed.get("base", ""),
        sealed.get("head", ""),
        tuple(sealed.get("changed", ())),
        manifest.get("digest", ""),
        tuple(manifest.get("files", ())),
        tuple(data.get("judge_changed", ())),
        rules=tuple(_rule_from_json(rule) for rule in data.get("rules") or ()),
        random_seed=seed if isinstance(seed, int) else None,
        hidden=str(hidden.get("digest", "")),
        hidden_files=int(hidden.get("files", 0)),
        test_network=data.get("test_network") is True,
        layer=str(manifest.get("layer", "")),
        layer_state=str(manifest.get("cache", "")),
    )


def _rule_from_json(data: dict[str, Any]) -> RuleDigest:
    return RuleDigest(
        str(data.get("name", "")),
        str(data.get("on_change", "review")),
        bool(data.get("allow_new")),
        str(data.get("base", "")),
        str(data.get("head", "")),
        tuple(data.get("changed", ())),
        tuple(data.get("added", ())),
    )


def cost_from_json(data: dict[str, Any]) -> Cost:
    def rows(table: object) -> dict[str, Usage]:
        items = table.items() if isinstance(table, dict) else ()
        return {
            k: Usage(v.get("wall_seconds", 0.0), v.get("cpu_minutes", 0.0) * 60, v.get("gib_minutes", 0.0) * 60)
            for k, v in items
            if isinstance(v, dict)
        }

    return Cost(
        per_check=rows(data.get("checks")),
        measured=data.get("basis") == "measured by Runtime",
        saved=rows(data.get("saved")),
    )
