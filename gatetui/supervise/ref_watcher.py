"""Ref watching: which agent branches moved, as soon as git says so.

watchfiles reports file events under the repository's git directory (loose
refs, packed-refs, reflogs). An event is only a hint: after each debounced
batch the branches are read again with dulwich and compared with what was
known, so a burst of commits becomes one move to the last head, and a lock
file or a reflog line never triggers anything by itself. A periodic re-read
(every `rescan_ms`) catches anything the file events missed.

A move made before the OS watch is installed makes no event, so once it is
installed the heads are read again and `RefWatcher.ready` is set: a caller
(a test) that needs its commit reported as it happens waits for it first.

No Textual here: consumers iterate `RefWatcher.moves()`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import cast

from watchfiles import Change, awatch

from gatetui.errors import GateError
from gatetui.git.repo import GitRepo

Heads = dict[str, str]  # branch name -> head sha
Moves = dict[str, str | None]  # branch name -> new head sha, None when deleted


def git_dir_of(repo: Path) -> Path:
    """The folder holding refs: `repo/.git`, or `repo` itself when bare."""
    dot_git = repo / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():  # a linked worktree: "gitdir: PATH"
        text = dot_git.read_text().strip()
        if text.startswith("gitdir:"):
            return (repo / text.split(":", 1)[1].strip()).resolve()
    return repo


class RefFilter:
    """Lets through branch refs, packed-refs and branch reflogs; never a lock.

    watchfiles' DefaultFilter drops everything under `.git`, which is
    exactly where refs live, hence this filter of our own.
    """

    def __init__(self, git_dir: Path):
        self.git_dir = str(git_dir.resolve())

    def __call__(self, change: Change, path: str) -> bool:
        if path.endswith(".lock") or not path.startswith(self.git_dir):
            return False
        rel = path[len(self.git_dir) :].lstrip("/")
        return rel == "packed-refs" or rel.startswith(("refs/heads/", "logs/refs/heads/"))


def read_heads(repo: Path, pattern: str) -> Heads:
    """The branches matching `pattern` and their heads, read afresh."""
    with GitRepo.open(repo) as git:
        return git.branches(pattern)


def moved(known: Mapping[str, str], current: Mapping[str, str]) -> Moves:
    """What changed between two readings of the heads."""
    out: Moves = {name: sha for name, sha in current.items() if known.get(name) != sha}
    out.update({name: None for name in known if name not in current})
    return out


class _StopAndStarted:
    """The stop event handed to awatch, which also tells when the watch is up.

    watchfiles installs the OS watch (inotify) in `RustNotify`'s
    constructor, inside awatch's first iteration, and offers no hook right
    after it. But its rust loop (`RustNotify.watch`, which only runs on a
    constructed `RustNotify`) calls `is_set()` on the stop event at every
    step: the first call is the earliest point at which the watch is known
    to be installed, so that call sets `started`. It comes from watchfiles'
    worker thread, hence `call_soon_threadsafe`.

    `set()` is what awatch calls when its iteration is cancelled, to end its
    worker thread: it stops this watch only, never the caller's `stop`.
    """

    def __init__(self, stop: asyncio.Event | None, started: asyncio.Event):
        self._loop = asyncio.get_running_loop()
        self._stop, self._started = stop, started
        self._told = self._set = False

    def is_set(self) -> bool:
        if not self._told:
            self._told = True
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is waiting
                self._loop.call_soon_threadsafe(self._started.set)
        return self._set or (self._stop is not None and self._stop.is_set())

    def set(self) -> None:
        self._set = True


class RefWatcher:
    """Yields the moves of branches matching `pattern` in `repo`.

    `step_ms`: quiet time that ends a burst of file events (watchfiles' step);
    `debounce_ms`: the longest a burst is gathered before it is acted on.

    `ready` is set once `moves()` has its file watch installed, has read
    the heads again under it and has handed over whatever moved since the
    first reading: from then on every move is reported by a file event, not
    only by the periodic re-read. A commit made before `ready` may be
    reported late or folded into the catch-up move; a caller (or a test)
    that needs its commit seen as a move waits for `ready` first.
    """

    def __init__(
        self, repo: Path, pattern: str = "agent/*", *, step_ms: int = 30, debounce_ms: int = 400, rescan_ms: int = 5000
    ):
        self.repo = Path(repo)
        self.pattern = pattern
        self.git_dir = git_dir_of(self.repo)
        self.step_ms, self.debounce_ms, self.rescan_ms = step_ms, debounce_ms, rescan_ms
        self.ready = asyncio.Event()
        self.batches_seen = 0  # batches of ref events (or periodic re-reads) whose heads were read again

    def read(self) -> Heads:
        return read_heads(self.repo, self.pattern)

    async def _reread(self, heads: Heads) -> tuple[Heads, Moves]:
        """The heads read again and what moved since `heads`; a ref file
        caught mid-rewrite keeps `heads`: its rewrite is an event of its own."""
        try:
            current = await asyncio.to_thread(self.read)
        except GateError:
            return heads, {}
        return current, moved(heads, current)

    async def moves(
        self, known: Mapping[str, str] | None = None, stop: asyncio.Event | None = None
    ) -> AsyncIterator[Moves]:
        """Every change of the heads after `known` (read now when None).

        Runs until `stop` is set or the consumer stops iterating. The heads
        are read a second time once the watch is installed: a move between
        the first reading (or `known`) and the watch's start makes no file
        event, and would otherwise wait for the periodic re-read.
        """
        self.ready.clear()
        heads = dict(known) if known is not None else await asyncio.to_thread(self.read)
        started = asyncio.Event()
        batches = awatch(
            self.git_dir,
            watch_filter=RefFilter(self.git_dir),
            step=self.step_ms,
            debounce=self.debounce_ms,
            rust_timeout=self.rescan_ms,
            yield_on_timeout=True,
            stop_event=cast(asyncio.Event, _StopAndStarted(stop, started)),  # awatch calls only is_set and set
        )
        # the first iteration runs as a task of its own: it installs the watch,
        # then waits in watchfiles' thread for events while the heads are re-read
        installing: asyncio.Future[set[tuple[Change, str]]] = asyncio.ensure_future(anext(batches))
        first: asyncio.Future[set[tuple[Change, str]]] | None = installing
        try:
            up = asyncio.ensure_future(started.wait())
            try:
                await asyncio.wait((installing, up), return_when=asyncio.FIRST_COMPLETED)
            finally:
                up.cancel()
            if started.is_set() or installing.done():  # a batch (or the end) can come before `started` is run
                heads, change = await self._reread(heads)
                if change:
                    yield change
                self.ready.set()
            while True:
                try:
                    if first is not None:
                        await first
                        first = None
                    else:
                        await anext(batches)
                except StopAsyncIteration:
                    return
                heads, change = await self._reread(heads)
                self.batches_seen += 1
                if change:
                    yield change
        finally:
            if first is not None:  # still installing or waiting: end it, its outcome is moot now
                first.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await first
            await batches.aclose()
