"""Ref watching: which agent branches moved, as soon as git says so.

watchfiles reports file events under the repository's git directory (loose
refs, packed-refs, reflogs). An event is only a hint: after each debounced
batch the branches are read again with dulwich and compared with what was
known, so a burst of commits becomes one move to the last head, and a lock
file or a reflog line never triggers anything by itself. A periodic re-read
(every `rescan_ms`) catches anything the file events missed.

No Textual here: consumers iterate `RefWatcher.moves()`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

from watchfiles import Change, awatch

from gatetui.errors import GateError
from gatetui.repo import GitRepo

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
        rel = path[len(self.git_dir):].lstrip("/")
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


class RefWatcher:
    """Yields the moves of branches matching `pattern` in `repo`.

    `step_ms`: quiet time that ends a burst of file events (watchfiles' step);
    `debounce_ms`: the longest a burst is gathered before it is acted on.
    """

    def __init__(self, repo: Path, pattern: str = "agent/*", *, step_ms: int = 30,
                 debounce_ms: int = 400, rescan_ms: int = 5000):
        self.repo = Path(repo)
        self.pattern = pattern
        self.git_dir = git_dir_of(self.repo)
        self.step_ms, self.debounce_ms, self.rescan_ms = step_ms, debounce_ms, rescan_ms

    def read(self) -> Heads:
        return read_heads(self.repo, self.pattern)

    async def moves(self, known: Mapping[str, str] | None = None,
                    stop: asyncio.Event | None = None) -> AsyncIterator[Moves]:
        """Every change of the heads after `known` (read now when None).

        Runs until `stop` is set or the consumer stops iterating.
        """
        heads = dict(known) if known is not None else await asyncio.to_thread(self.read)
        async for _batch in awatch(
            self.git_dir, watch_filter=RefFilter(self.git_dir), step=self.step_ms,
            debounce=self.debounce_ms, rust_timeout=self.rescan_ms, yield_on_timeout=True,
            stop_event=stop,
        ):
            try:
                current = await asyncio.to_thread(self.read)
            except GateError:  # a ref file caught mid-rewrite: the next event re-reads
                continue
            change = moved(heads, current)
            heads = current
            if change:
                yield change
