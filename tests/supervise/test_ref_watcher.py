"""Ref watching on a real git repo with real watchfiles: a commit on a watched
branch is seen, a burst is one move, locks and other branches are not."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from watchfiles import Change

from gatetui.supervise.ref_watcher import Moves, RefFilter, RefWatcher, git_dir_of, moved
from tests.support.repos import GIT_ENV, MakeRepo, git
from tests.support.supervising import watching

BASE = {"a.txt": "a\n"}
HEAD = {"a.txt": "b\n"}


async def next_move(moves: AsyncIterator[Moves], timeout: float = 5.0) -> Moves:
    try:
        async with asyncio.timeout(timeout):
            return await anext(moves)
    except TimeoutError:
        pytest.fail(f"the watcher reported no move within {timeout} s")


async def batch_seen(watcher: RefWatcher, after: int, timeout: float = 10.0) -> None:
    """Until the watcher has read the heads again for a batch of ref events after the first `after`."""
    try:
        async with asyncio.timeout(timeout):
            while watcher.batches_seen <= after:
                await asyncio.sleep(0.01)
    except TimeoutError:
        pytest.fail(f"the watcher acted on no batch of ref events within {timeout} s")


def commit_on(repo: Path, branch: str, n: int = 1) -> str:
    """`n` commits on `branch` without a checkout (plumbing), as fast as git goes."""
    script = (
        f'for i in $(seq {n}); do t=$(git commit-tree "{branch}^{{tree}}" -p "{branch}" -m "c $i"); '
        f'git update-ref "refs/heads/{branch}" "$t"; done'
    )
    subprocess.run(["sh", "-c", script], cwd=repo, env=GIT_ENV, check=True)
    return git(repo, "rev-parse", branch)


@pytest.mark.asyncio
async def test_a_commit_on_a_watched_branch_is_one_move(make_repo: MakeRepo) -> None:
    repo = make_repo(BASE, HEAD)
    watcher = RefWatcher(repo, "agent/*", step_ms=30)
    moves = watcher.moves()
    first = asyncio.ensure_future(next_move(moves))
    await watching(watcher)
    sha = commit_on(repo, "agent/x")
    assert await first == {"agent/x": sha}
    await moves.aclose()


@pytest.mark.asyncio
async def test_a_burst_of_commits_is_debounced_to_the_last_head(make_repo: MakeRepo) -> None:
    repo = make_repo(BASE, HEAD)
    watcher = RefWatcher(repo, "agent/*", step_ms=400, debounce_ms=3000)
    moves = watcher.moves()
    first = asyncio.ensure_future(next_move(moves))
    await watching(watcher)
    last = commit_on(repo, "agent/x", n=5)
    assert await first == {"agent/x": last}
    await moves.aclose()


@pytest.mark.asyncio
async def test_other_branches_and_lock_files_are_ignored(make_repo: MakeRepo) -> None:
    repo = make_repo(BASE, HEAD)
    watcher = RefWatcher(repo, "agent/*", step_ms=30, rescan_ms=60_000)  # a batch is file events, not a rescan
    moves = watcher.moves()
    first = asyncio.ensure_future(next_move(moves))
    await watching(watcher)
    seen = watcher.batches_seen
    (repo / ".git" / "refs" / "heads" / "agent" / "x.lock").write_text("0" * 40 + "\n")
    commit_on(repo, "main")
    # main's move was read again: the lock's event, earlier, was dropped or read in that same batch
    await batch_seen(watcher, seen)
    assert first.done() is False
    (repo / ".git" / "refs" / "heads" / "agent" / "x.lock").unlink()
    git(repo, "branch", "agent/y", "main")
    assert await first == {"agent/y": git(repo, "rev-parse", "main")}
    await moves.aclose()


@pytest.mark.asyncio
async def test_packed_refs_and_deletions_are_seen(make_repo: MakeRepo) -> None:
    repo = make_repo(BASE, HEAD)
    git(repo, "branch", "agent/y", "main")
    git(repo, "pack-refs", "--all")
    watcher = RefWatcher(repo, "agent/*", step_ms=30)
    moves = watcher.moves()
    first = asyncio.ensure_future(next_move(moves))
    await watching(watcher)
    git(repo, "update-ref", "-d", "refs/heads/agent/y")  # only in packed-refs: rewrites it
    assert await first == {"agent/y": None}
    await moves.aclose()


@pytest.mark.asyncio
async def test_a_move_before_the_watch_started_is_caught_up_once_it_is(make_repo: MakeRepo) -> None:
    """`known` older than the repo (a commit landed between the first reading
    and the watch's start, which no file event will report): the re-read
    under the installed watch reports it at once, before `ready`."""
    repo = make_repo(BASE, HEAD)
    old = git(repo, "rev-parse", "agent/x")
    sha = commit_on(repo, "agent/x")
    watcher = RefWatcher(repo, "agent/*", step_ms=30, rescan_ms=60_000)  # no periodic re-read to rescue it
    moves = watcher.moves({"agent/x": old, "agent/gone": old})
    assert await next_move(moves) == {"agent/x": sha, "agent/gone": None}
    assert watcher.ready.is_set() is False  # ready only once the catch-up was taken
    later = asyncio.ensure_future(next_move(moves))
    await watching(watcher)
    newer = commit_on(repo, "agent/x")
    assert await later == {"agent/x": newer}
    await moves.aclose()


def test_the_filter_keeps_refs_and_reflogs_only(tmp_path: Path) -> None:
    keep = RefFilter(tmp_path)
    root = str(tmp_path.resolve())
    assert keep(Change.modified, f"{root}/refs/heads/agent/x") is True
    assert keep(Change.added, f"{root}/packed-refs") is True
    assert keep(Change.modified, f"{root}/logs/refs/heads/agent/x") is True
    assert keep(Change.added, f"{root}/refs/heads/agent/x.lock") is False
    assert keep(Change.added, f"{root}/objects/ab/cdef") is False
    assert keep(Change.modified, f"{root}/index") is False


def test_moved_names_new_changed_and_gone_branches() -> None:
    assert moved({"a": "1", "b": "2"}, {"a": "1", "b": "3", "c": "4"}) == {"b": "3", "c": "4"}
    assert moved({"a": "1"}, {}) == {"a": None}


def test_git_dir_of_a_bare_and_a_normal_repo(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo(BASE, HEAD)
    assert git_dir_of(repo) == repo / ".git"
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    assert git_dir_of(bare) == bare
