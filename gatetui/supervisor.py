"""The supervisor: watches a repo's agent branches and gates every new head.

It is what the TUI and `gatetui serve` drive: it knows the repo, the
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
show is read back from `branches` / `Branch` / `Run` (gatetui.runs).

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
import fnmatch
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from gatetui.backends.base import Backend
from gatetui.backends.closing import ClosingBackend
from gatetui.config import load_settings
from gatetui.errors import BadInput, GateError
from gatetui.gate.checks import CheckId
from gatetui.gate.cost import Usage
from gatetui.gate.events import GateEvent, RunFinished, RunStarted
from gatetui.gate.api import gate_request
from gatetui.gate.plan import make_plan
from gatetui.gate.runner import run_gate
from gatetui.history import Recorder
from gatetui.mirror import fetch_commit
from gatetui.repo import GitRepo
from gatetui.supervise.runs import Branch, ReviewFile, Run
from gatetui.supervise.states import RunState
from gatetui.snapshot import Snapshot
from gatetui.state_inputs import gate_inputs
from gatetui.store import Store
from gatetui.watch import Moves, RefWatcher

SUBMIT_CAP = 3
NAMED_FILE = re.compile(r"\(([^()\s:]+):\d+\)")  # a finding's "(path:line)" in a check's detail
STREAM_CHECK = {"install": CheckId.INSTALL, "base install": CheckId.INSTALL, "old tests": CheckId.OLD_TESTS}


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


# --- the supervisor ------------------------------------------------------------


class Supervisor:
    """Gates every new head of the branches matching `pattern` in `repo`."""

    def __init__(self, repo: Path, backend: Backend, store: Store, *, base: str = "main",
                 pattern: str = "agent/*", submit_cap: int | None = None, timeout: float | None = None,
                 parallel: int = 2, clock: Callable[[], float] = time.time,
                 watcher: RefWatcher | None = None):
        self.repo = Path(repo).resolve()
        self.backend, self.store = backend, store
        self.base, self.pattern = base, pattern
        self.timeout, self.clock = timeout, clock
        self._cap_given = submit_cap  # --cap; None: base's submit_cap, else SUBMIT_CAP
        self._cap_at_base: tuple[str, int | None] | None = None  # (base sha, its submit_cap)
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

    @property
    def submit_cap(self) -> int:
        """Submits per branch before a person takes over: `--cap` when given,
        else base's `submit_cap` as last read (`read_cap`), else 3."""
        if self._cap_given is not None:
            return self._cap_given
        at_base = self._cap_at_base[1] if self._cap_at_base else None
        return SUBMIT_CAP if at_base is None else at_base

    def read_cap(self) -> int:
        """Read base's `submit_cap` again (blocking: call it in a thread);
        a base that cannot be read or configured keeps the cap as it was,
        and its gate runs say what is wrong."""
        if self._cap_given is None:
            with contextlib.suppress(GateError), GitRepo.open(self.repo) as git:
                sha = git.resolve(self.base)
                if self._cap_at_base is None or self._cap_at_base[0] != sha:
                    self._cap_at_base = (sha, load_settings(Snapshot.of_commit(git, sha)).submit_cap)
        return self.submit_cap

    async def start(self, launch: Launcher | None = None) -> None:
        """Load the history, gate heads that have no run yet, then watch."""
        self._launch = launch or task_launcher
        await asyncio.to_thread(self.read_cap)
        heads = await asyncio.to_thread(self.watcher.read)
        records = await asyncio.to_thread(self.store.runs, self.repo)
        escalated = await asyncio.to_thread(self.store.escalated, self.repo)
        at_base = await asyncio.to_thread(self._part_of_base, heads.values())
        for name, sha in heads.items():
            branch = self.branches[name] = Branch(name, sha, sha in at_base)
            branch.runs = [Run.from_record(r) for r in records if r.get("branch") == name]
            branch.escalated = name in escalated
        for name, runs in self._submitted_only(records, heads).items():
            branch = self.branches[name] = Branch(name, runs[-1].head, runs=runs)
            branch.escalated = name in escalated
        self._emit(BranchesChanged())
        for branch in self.branches.values():
            if not branch.at_base and not any(r.head == branch.head and not r.stopped  # kept, not a verdict
                                              for r in branch.runs):
                self.gate(branch.name)
        self._watching = self._launch("watch", self._watch(heads))

    def _submitted_only(self, records: list[dict[str, Any]], heads: Mapping[str, str]) -> dict[str, list[Run]]:
        """Branches known only from their submits (the agent's clone holds
        them, the supervised repo does not): shown with their kept runs,
        their head the last commit submitted. Not gated again at start: the
        agent submits what it wants judged."""
        found: dict[str, list[Run]] = {}
        for record in records:
            name = str(record.get("branch", ""))
            if name and name not in heads and fnmatch.fnmatchcase(name, self.pattern):
                found.setdefault(name, []).append(Run.from_record(record))
        return found

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
            elif not branch.has_run(sha):  # a submit may have gated it already
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
        run.move_to(RunState.CANCELLED)
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
        """Each sealed file head changed, then each file a finding of
        `old_tests` names (library code reaching into the runner), base's
        and head's version: what the person deciding has to read."""
        if run.digests is None:
            return []
        paths = dict.fromkeys(p.split("#", 1)[0] for p in run.digests.sealed_changed)  # FILE#SECTION: the file
        paths.update(dict.fromkeys(NAMED_FILE.findall(run.checks[CheckId.OLD_TESTS].detail)))
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

    async def gate_commit(self, name: str, sha: str, source: Path, as_uid: int | None = None) -> Run:
        """Gate commit `sha` of branch `name`, read from the agent's repo at
        `source` (a clone or worktree), with `as_uid`'s rights when given. A run of that very commit already
        under way or judged is returned instead of a new one. Raises BadInput
        when the branch is not watched, the commit cannot be read or holds
        nothing new."""
        if not fnmatch.fnmatchcase(name, self.pattern):
            raise BadInput(f"{name} is not a supervised branch: work on a branch named like "
                           f"{self.pattern.replace('*', 'fix-dates')}, then submit")
        await asyncio.to_thread(self._fetch, Path(source), sha, as_uid)
        branch = self.branches.setdefault(name, Branch(name, sha))
        branch.head, branch.at_base = sha, False
        if branch.has_run(sha):
            self._emit(BranchesChanged())
            return branch.runs[-1]
        run = self.gate(name)
        assert run is not None
        return run

    def _fetch(self, source: Path, sha: str, as_uid: int | None = None) -> None:
        with self.store.locked("mirror"):
            fetch_commit(self.mirror, self.repo, self.base, source, sha, as_uid)
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
        backend = ClosingBackend(self.backend)
        self._active.add(run.run_id)
        try:
            async with self._slots:
                if run.status == RunState.CANCELLED:
                    return
                backend.backend = self.backend  # the one chosen when the run starts: `b` reaches queued runs
                run.backend = self.backend.name
                run.move_to(RunState.RUNNING)
                self._emit(BranchesChanged())
                base = self.base if source is None else await asyncio.to_thread(self.check)
                inputs = await asyncio.to_thread(gate_inputs, self.store.root, self.repo, self.store)
                request = gate_request(source or self.repo, base, run.head, inputs, timeout=self.timeout,
                                       run_id=run.run_id)
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
            run.move_to(RunState.ERROR)
            run.message, run.finished_at = str(err), self.clock()
            self._emit(RunFailed(run.branch, run.run_id, str(err)))
        except asyncio.CancelledError:
            run.move_to(RunState.CANCELLED)
            raise
        except Exception as err:  # a bug, not the agent's fault: the consumer shows it
            run.move_to(RunState.ERROR)
            run.message, run.finished_at = f"{type(err).__name__}: {err}", self.clock()
            raise
        finally:
            await backend.close_all()  # waits for every close, cancelled or not
            recorder.close_logs()
            if recorder.record is None and RunState(run.status).stopped:  # no verdict: kept too,
                self._keep_stopped(run)  # every run is shown after a restart
            if self._handles.get(run.run_id) is not None and not run.in_progress:
                self._handles.pop(run.run_id, None)
            self._active.discard(run.run_id)
            self._emit(RunUpdated(run.branch, run.run_id))
            self._emit(BranchesChanged())

    def _keep_stopped(self, run: Run) -> None:
        """A run that ended without a verdict: its rows say why, and its
        record is kept (unsealed verdicts are never read as ones)."""
        run.stop(RunState(run.status), run.message, self.clock())
        try:
            self.store.save_run(self.repo, run.stopped_record(str(self.repo)))
        except OSError as err:
            self._emit(RunFailed(run.branch, run.run_id, f"could not keep the run's record: {err}"))

    def apply(self, run: Run, event: GateEvent) -> None:
        """Fold a gate event into `run` and tell the listeners (live runs
        call this; a replay or a test can feed recorded events the same way)."""
        run.apply(event, self.clock())
        self._emit(RunUpdated(run.branch, run.run_id, event))
        if isinstance(event, (RunStarted, RunFinished)):
            self._emit(BranchesChanged())


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", errors="replace")
