"""The supervisor: watches a repo's agent branches and gates every new head.

It is what the TUI drives (and `gatetui serve` will): it knows the repo, the
base ref, the branch pattern and the backend; it keeps, per branch, the head,
its runs (history from the store, then live ones) and whether the latest
verdict is stale. No Textual here.

    supervisor = Supervisor(repo, backend, store)
    unsubscribe = supervisor.subscribe(print)   # or: async for e in supervisor.events()
    await supervisor.start()                    # history, gates missed heads, watches
    ...
    await supervisor.stop()

How runs are started is the consumer's choice through `launch(key, coro)`,
which must return something with `cancel()`: plain asyncio tasks by default,
Textual workers in the TUI (one exclusive group per key). A new head on a
branch cancels that branch's run in progress (the runner removes its
workspace) and starts one on the new head. Every finished run is recorded
through `history.Recorder`, sealed, in the store.

Consumers get `SupervisorEvent`s; they say what changed, and the state to
show is read back from `branches` / `Branch` / `Run`.

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
import dataclasses
import difflib
import fnmatch
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from gatetui.backends.base import Backend
from gatetui.errors import BadInput, GateError
from gatetui.gate.checks import CHECK_ORDER, CheckId, CheckResult, Status
from gatetui.gate.cost import Cost, Usage
from gatetui.gate.digests import Digests, RuleDigest
from gatetui.gate.events import (
    CheckFinished, CheckProgress, CheckStarted, CostUpdated, DigestsComputed, GateEvent,
    OutputChunk, RunFinished, RunStarted,
)
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from gatetui.history import Recorder
from gatetui.mirror import fetch_commit
from gatetui.repo import GitRepo
from gatetui.state_inputs import StateCache, hidden_tests
from gatetui.store import Store
from gatetui.watch import Moves, RefWatcher

SUBMIT_CAP = 3
LOG_LINES = 10_000  # lines kept per check in memory; the store keeps the full log (capped)
IN_PROGRESS = ("queued", "running")
STREAM_CHECK = {"install": CheckId.INSTALL, "old tests": CheckId.OLD_TESTS}


class Cancellable(Protocol):
    def cancel(self) -> Any: ...


Launcher = Callable[[str, Coroutine[Any, Any, None]], Cancellable]


def task_launcher(key: str, coro: Coroutine[Any, Any, None]) -> Cancellable:
    return asyncio.get_running_loop().create_task(coro, name=key)


# --- what consumers are told -------------------------------------------------


@dataclass(frozen=True)
class BranchesChanged:
    """A branch appeared, went, moved, or its latest verdict changed."""


@dataclass(frozen=True)
class RunUpdated:
    """One gate event folded into a run (`event` None: the run's status changed)."""

    branch: str
    run_id: str
    event: GateEvent | None = None


@dataclass(frozen=True)
class RunFailed:
    """The gate could not run at all; `message` says what to do."""

    branch: str
    run_id: str
    message: str


@dataclass(frozen=True)
class EscalationRaised:
    """A branch used up its submits: a person is asked to take over."""

    branch: str
    message: str


SupervisorEvent = BranchesChanged | RunUpdated | RunFailed | EscalationRaised
Listener = Callable[[SupervisorEvent], None]


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
    status: str = "queued"  # queued, running, pass, fail, review, error, cancelled
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

    @property
    def in_progress(self) -> bool:
        return self.status in IN_PROGRESS

    def log(self, check: CheckId) -> LogBuffer:
        return self.logs.setdefault(check, LogBuffer())

    def apply(self, event: GateEvent, now: float) -> None:
        """Fold one gate event into the run."""
        match event:
            case RunStarted():
                self.status, self.base, self.backend, self.notes = "running", event.base, event.backend, event.notes
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
                self.status, self.cost, self.digests = event.verdict.value, event.cost, event.digests
                self.seconds, self.finished_at = event.seconds, now

    def results(self) -> list[CheckResult]:
        return [CheckResult(r.check, r.status, r.detail, r.seconds or 0.0) for r in self.checks.values()
                if r.status.final]

    def verdict_block(self) -> str:
        """The article's block: one line per check, then the verdict."""
        lines = [r.line() for r in self.results()]
        return "\n".join([*lines, f"verdict: {self.status}"])

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Run:
        run = cls(run_id=str(record["run_id"]), branch=str(record.get("branch", "")),
                  head=str(record.get("head", "")), status=str(record.get("verdict", "error")),
                  base=str(record.get("base", "")), backend=str(record.get("backend", "")),
                  finished_at=record.get("finished_at"), seconds=record.get("seconds"),
                  notes=tuple(record.get("notes", ())), seal=str(record.get("seal", "")),
                  review=str((record.get("review") or {}).get("decision", "")), record=record)
        run.started_at = (run.finished_at or 0.0) - (run.seconds or 0.0)
        for item in record.get("checks", []):
            with contextlib.suppress(ValueError, KeyError):
                check = CheckId(item["id"])
                run.checks[check] = CheckRow(check, Status(item["status"]), item.get("detail", ""),
                                             None, item.get("seconds"))
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

    @property
    def judged(self) -> Run | None:
        """The latest run that ended with a verdict."""
        for run in reversed(self.runs):
            if not run.in_progress and run.status != "cancelled":
                return run
        return None

    @property
    def stale(self) -> bool:
        judged = self.judged
        return judged is not None and judged.head != self.head

    @property
    def status(self) -> str:
        """What the branch list shows: running, queued, the verdict, or why none."""
        latest = self.latest
        if latest is not None and latest.in_progress:
            return latest.status
        judged = self.judged
        if judged is not None:
            return "stale" if self.stale else judged.status
        return "at base" if self.at_base else "no run"


@dataclass(frozen=True)
class ReviewFile:
    """A sealed file that head changed: both versions, for a person to compare."""

    path: str
    base: str | None  # None: absent at base (added by the agent)
    head: str | None  # None: deleted at head

    def opcodes(self) -> list[tuple[str, int, int, int, int]]:
        a = (self.base or "").splitlines()
        b = (self.head or "").splitlines()
        return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def digests_from_json(data: dict[str, Any]) -> Digests | None:
    """A record's digests back as `Digests`, as the run had them."""
    if not data.get("head"):
        return None
    sealed, manifest = data.get("sealed") or {}, data.get("manifest") or {}
    hidden, seed = data.get("hidden") or {}, data.get("random_seed")
    return Digests(data.get("base", ""), data["head"], sealed.get("base", ""), sealed.get("head", ""),
                   tuple(sealed.get("changed", ())), manifest.get("digest", ""),
                   tuple(manifest.get("files", ())), tuple(data.get("judge_changed", ())),
                   rules=tuple(_rule_from_json(rule) for rule in data.get("rules") or ()),
                   random_seed=seed if isinstance(seed, int) else None,
                   hidden=str(hidden.get("digest", "")), hidden_files=int(hidden.get("files", 0)),
                   test_network=data.get("test_network") is True)


def _rule_from_json(data: dict[str, Any]) -> RuleDigest:
    return RuleDigest(str(data.get("name", "")), str(data.get("on_change", "review")), bool(data.get("allow_new")),
                      str(data.get("base", "")), str(data.get("head", "")), tuple(data.get("changed", ())),
                      tuple(data.get("added", ())))


def cost_from_json(data: dict[str, Any]) -> Cost:
    checks = {k: Usage(v.get("wall_seconds", 0.0), v.get("cpu_minutes", 0.0) * 60, v.get("gib_minutes", 0.0) * 60)
              for k, v in (data.get("checks") or {}).items()}
    return Cost(per_check=checks, measured=data.get("basis") == "measured by Runtime")


# --- the supervisor ------------------------------------------------------------


class Supervisor:
    """Gates every new head of the branches matching `pattern` in `repo`."""

    def __init__(self, repo: Path, backend: Backend, store: Store, *, base: str = "main",
                 pattern: str = "agent/*", submit_cap: int = SUBMIT_CAP, timeout: float | None = None,
                 parallel: int = 2, clock: Callable[[], float] = time.time,
                 watcher: RefWatcher | None = None):
        self.repo = Path(repo).resolve()
        self.backend, self.store = backend, store
        self.base, self.pattern = base, pattern
        self.submit_cap, self.timeout, self.clock = submit_cap, timeout, clock
        self.watcher = watcher or RefWatcher(self.repo, pattern)
        self.branches: dict[str, Branch] = {}
        self.started_at = clock()
        self._slots = asyncio.Semaphore(parallel)
        self._listeners: list[Listener] = []
        self._handles: dict[str, Cancellable] = {}  # run_id -> its task or worker
        self._launch: Launcher = task_launcher
        self._stop = asyncio.Event()
        self._watching: Cancellable | None = None
        self._active: set[str] = set()  # run ids whose coroutine has not ended
        self._submitted: set[str] = set()  # submitted commits read into the mirror

    # --- listening ---------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with every SupervisorEvent; returns the unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def events(self) -> AsyncIterator[SupervisorEvent]:
        queue: asyncio.Queue[SupervisorEvent] = asyncio.Queue()
        unsubscribe = self.subscribe(queue.put_nowait)
        try:
            while True:
                yield await queue.get()
        finally:
            unsubscribe()

    def _emit(self, event: SupervisorEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    # --- lifecycle -----------------------------------------------------------

    def check(self) -> str:
        """Raise BadInput when the repo or base cannot be read; base's sha."""
        with GitRepo.open(self.repo) as git:
            return git.resolve(self.base)

    async def start(self, launch: Launcher | None = None) -> None:
        """Load the history, gate heads that have no run yet, then watch."""
        self._launch = launch or task_launcher
        heads = await asyncio.to_thread(self.watcher.read)
        records = await asyncio.to_thread(self.store.runs, self.repo)
        escalated = await asyncio.to_thread(self.store.escalated, self.repo)
        at_base = await asyncio.to_thread(self._part_of_base, heads.values())
        for name, sha in heads.items():
            branch = self.branches[name] = Branch(name, sha, sha in at_base)
            branch.runs = [Run.from_record(r) for r in records if r.get("branch") == name]
            branch.escalated = name in escalated
        self._emit(BranchesChanged())
        for branch in self.branches.values():
            if not branch.at_base and not any(r.head == branch.head for r in branch.runs):
                self.gate(branch.name)
        self._watching = self._launch("watch", self._watch(heads))

    async def stop(self, wait: float = 15.0) -> None:
        """Stop watching, cancel every run in progress and wait (at most
        `wait` seconds) until their workspaces are cleaned up."""
        self._stop.set()
        if self._watching is not None:
            self._watching.cancel()
        for branch in self.branches.values():
            self.cancel(branch.name)
        deadline = time.monotonic() + wait
        while self._active and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    async def _watch(self, heads: dict[str, str]) -> None:
        async for moves in self.watcher.moves(heads, self._stop):
            await self.apply_moves(moves)

    async def apply_moves(self, moves: Moves) -> None:
        """Act on branch moves (from the watcher, or a caller that knows)."""
        live = [sha for sha in moves.values() if sha is not None]
        at_base = await asyncio.to_thread(self._part_of_base, live)
        for name, sha in moves.items():
            if sha is None:
                self.cancel(name)
                self.branches.pop(name, None)
                continue
            branch = self.branches.setdefault(name, Branch(name, sha))
            branch.head, branch.at_base = sha, sha in at_base
            if branch.at_base:
                self.cancel(name)
            elif not self._has_run(branch, sha):  # a submit may have gated it already
                self.gate(name)
        self._emit(BranchesChanged())

    def _part_of_base(self, heads: Iterable[str]) -> set[str]:
        with GitRepo.open(self.repo) as git:
            tip = git.resolve(self.base)
            return {h for h in heads if h == tip or git.merge_base(tip, h) == h}

    # --- commands --------------------------------------------------------------

    def gate(self, name: str) -> Run | None:
        """Gate the branch's head now, cancelling its run in progress."""
        branch = self.branches.get(name)
        if branch is None or branch.at_base:
            return None
        self.cancel(name)
        run = Run(uuid.uuid4().hex[:12], name, branch.head, started_at=self.clock(), backend=self.backend.name)
        branch.runs.append(run)
        self._handles[run.run_id] = self._launch(f"gate {name}", self._gate(run, self._source_of(branch.head)))
        self._emit(BranchesChanged())
        return run

    def cancel(self, name: str) -> bool:
        """Cancel the branch's run in progress; True when there was one."""
        branch = self.branches.get(name)
        run = branch.latest if branch else None
        if run is None or not run.in_progress:
            return False
        run.status = "cancelled"
        handle = self._handles.pop(run.run_id, None)
        if handle is not None:
            handle.cancel()
        self._emit(RunUpdated(name, run.run_id))
        self._emit(BranchesChanged())
        return True

    def set_backend(self, backend: Backend) -> None:
        """Runs started from now on use `backend`."""
        self.backend = backend

    def review(self, run: Run, decision: str, by: str = "") -> None:
        """Record a person's decision (accepted / rejected) on a review run."""
        record = self.store.set_review(self.repo, run.run_id, decision, by)
        run.review, run.record, run.seal = decision, record, str(record.get("seal", ""))
        self._emit(RunUpdated(run.branch, run.run_id))

    # --- reading ---------------------------------------------------------------

    def run(self, name: str, run_id: str | None = None) -> Run | None:
        branch = self.branches.get(name)
        if branch is None:
            return None
        if run_id is None:
            return branch.latest
        return next((r for r in branch.runs if r.run_id == run_id), None)

    def submits_used(self, name: str) -> int:
        return self.store.submits_used(self.repo, name)

    def cost_since_start(self) -> Usage:
        total = Usage()
        for branch in self.branches.values():
            for run in branch.runs:
                if run.started_at >= self.started_at:
                    total = total + run.cost.total
        return total

    def review_files(self, run: Run) -> list[ReviewFile]:
        """Each sealed file head changed, base's and head's version."""
        if run.digests is None:
            return []
        paths = dict.fromkeys(p.split("#", 1)[0] for p in run.digests.sealed_changed)  # FILE#SECTION: the file
        with GitRepo.open(self.mirror if self.mirror.exists() else self.repo) as git:
            return [ReviewFile(path, _text(git.read(run.digests.base, path)),
                               _text(git.read(run.digests.head, path))) for path in paths]

    def load_logs(self, run: Run) -> None:
        """Fill a stored run's logs from the store (once)."""
        if run.logs or run.in_progress:
            return
        folder = self.store.log_path(self.repo, run.run_id, "x").parent
        for path in sorted(folder.glob("*.log")) if folder.is_dir() else ():
            stream = path.stem.replace("-", " ")
            check = STREAM_CHECK.get(stream, CheckId.RUNS)
            with contextlib.suppress(OSError):
                run.log(check).append(stream, path.read_text(errors="replace") + "\n")

    # --- submitted commits, the cap, escalation ------------------------------------

    @property
    def mirror(self) -> Path:
        """Where submitted commits' objects are kept: in the 0700 state directory."""
        return self.store.repo_dir(self.repo) / "mirror.git"

    def _source_of(self, sha: str) -> Path | None:
        return self.mirror if sha in self._submitted else None

    @staticmethod
    def _has_run(branch: Branch, sha: str) -> bool:
        latest = branch.latest
        return latest is not None and latest.head == sha and latest.status not in ("cancelled", "error")

    async def gate_commit(self, name: str, sha: str, source: Path) -> Run:
        """Gate commit `sha` of branch `name`, read from the agent's repo at
        `source` (a clone or worktree). A run of that very commit already
        under way or judged is returned instead of a new one. Raises BadInput
        when the branch is not watched, the commit cannot be read or holds
        nothing new."""
        if not fnmatch.fnmatchcase(name, self.pattern):
            raise BadInput(f"{name} is not a supervised branch: work on a branch named like "
                           f"{self.pattern.replace('*', 'fix-dates')}, then submit")
        await asyncio.to_thread(self._fetch, Path(source), sha)
        branch = self.branches.setdefault(name, Branch(name, sha))
        branch.head, branch.at_base = sha, False
        if self._has_run(branch, sha):
            self._emit(BranchesChanged())
            return branch.runs[-1]
        run = self.gate(name)
        assert run is not None
        return run

    def _fetch(self, source: Path, sha: str) -> None:
        with self.store.locked("mirror"):
            fetch_commit(self.mirror, self.repo, self.base, source, sha)
        self._submitted.add(sha)

    def escalate(self, name: str, head: str, message: str) -> None:
        """The branch used up its submits: mark it and ask a person."""
        branch = self.branches.setdefault(name, Branch(name, head))
        branch.escalated = True
        self.store.set_escalated(self.repo, name, True)
        self._emit(EscalationRaised(name, message))
        self._emit(BranchesChanged())

    def give_back_submits(self, name: str) -> None:
        """A person took over: the branch's submits start again from none."""
        self.store.reset_submits(self.repo, name)
        self.store.set_escalated(self.repo, name, False)
        branch = self.branches.get(name)
        if branch is not None:
            branch.escalated = False
        self._emit(BranchesChanged())

    async def finished(self, run: Run) -> Run:
        """Wait until `run` ends: a verdict, an error, or cancelled."""
        done = asyncio.Event()
        unsubscribe = self.subscribe(lambda _: done.set() if not run.in_progress else None)
        try:
            while run.in_progress:
                done.clear()
                await done.wait()
        finally:
            unsubscribe()
        return run

    # --- one run -------------------------------------------------------------------

    async def _gate(self, run: Run, source: Path | None = None) -> None:
        """`source`: the repo holding head when it is not the supervised one
        (the mirror of submitted commits); base is then given as its sha."""
        recorder = Recorder(self.store, run.branch)
        backend = _ClosingBackend(self.backend)
        self._active.add(run.run_id)
        try:
            async with self._slots:
                if run.status == "cancelled":
                    return
                run.status = "running"
                self._emit(BranchesChanged())
                base = self.base if source is None else await asyncio.to_thread(self.check)
                request = GateRequest(
                    source or self.repo, base, run.head, self.timeout, run_id=run.run_id,
                    hidden=await asyncio.to_thread(hidden_tests, self.store.root, self.repo),
                    baseline_cache=StateCache(self.store.root, self.repo, self.store))
                plan = await asyncio.to_thread(make_plan, request)
                async for event in run_gate(plan, backend):  # type: ignore[arg-type]
                    if source is not None and isinstance(event, RunStarted):  # recorded as the supervised repo's
                        event = dataclasses.replace(event, repo=str(self.repo), base_ref=self.base,
                                                    head_ref=run.branch)
                    recorder(event)
                    self.apply(run, event)
                run.record = recorder.record
                run.seal = str((recorder.record or {}).get("seal", ""))
        except GateError as err:
            run.status, run.message, run.finished_at = "error", str(err), self.clock()
            self._emit(RunFailed(run.branch, run.run_id, str(err)))
        except asyncio.CancelledError:
            run.status = "cancelled"
            raise
        except Exception as err:  # a bug, not the agent's fault: the consumer shows it
            run.status, run.message, run.finished_at = "error", f"{type(err).__name__}: {err}", self.clock()
            raise
        finally:
            await asyncio.shield(backend.close_all())
            recorder.close_logs()
            if self._handles.get(run.run_id) is not None and not run.in_progress:
                self._handles.pop(run.run_id, None)
            self._active.discard(run.run_id)
            self._emit(RunUpdated(run.branch, run.run_id))
            self._emit(BranchesChanged())

    def apply(self, run: Run, event: GateEvent) -> None:
        """Fold a gate event into `run` and tell the listeners (live runs
        call this; a replay or a test can feed recorded events the same way)."""
        run.apply(event, self.clock())
        self._emit(RunUpdated(run.branch, run.run_id, event))
        if isinstance(event, (RunStarted, RunFinished)):
            self._emit(BranchesChanged())


class _ClosingBackend:
    """The run's backend, closing on the way out every workspace it opened.

    The runner closes its workspaces however a run ends, except one cancelled
    during the install (the install workspace is not yet the runner's to
    close): this wrapper closes any workspace still open when the run ends.
    """

    def __init__(self, backend: Backend):
        self.backend = backend
        self.opened: list[_OnceWorkspace] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)

    async def open(self, export: Callable[[Path], None], label: str) -> Any:
        workspace = _OnceWorkspace(await self.backend.open(export, label))
        self.opened.append(workspace)
        return workspace

    async def close_all(self) -> None:
        for workspace in self.opened:
            with contextlib.suppress(Exception):
                await workspace.close()


class _OnceWorkspace:
    def __init__(self, workspace: Any):
        self.workspace, self.closed = workspace, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.workspace, name)

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            await self.workspace.close()


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", errors="replace")
