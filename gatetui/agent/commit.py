"""The agent's work made a commit on its own branch, and undone to the
byte when the supervisor refuses it: the index and the branch as they were,
files on disk untouched (a submit that cannot be gated leaves no trace)."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from dulwich import porcelain
from dulwich.index import Index, IndexEntry
from dulwich.objects import S_ISGITLINK, ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo

from gatetui.errors import BadInput

DEFAULT_MESSAGE = "gatetui submit"


def working_copy(path: Path) -> Path:
    """The top-level folder of the git working copy holding `path`."""
    here = path.resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    raise BadInput(f"not inside a git working copy: {here} (run submit in your clone, or pass --repo)")


def current_branch(top: Path) -> str:
    try:
        return porcelain.active_branch(str(top)).decode()
    except (ValueError, IndexError, KeyError):
        raise BadInput("HEAD is detached: switch to your branch (git switch agent/NAME), then submit") from None


@dataclass(frozen=True)
class Committed:
    """What `commit_work` did, and what `undo` needs to take it back: the
    index and the branch's ref as they were (ref None: an unborn branch)."""

    branch: str
    head: str
    committed: bool
    index_before: bytes | None = None
    ref_before: bytes | None = None


def has_work(top: Path) -> bool:
    """Whether `commit_work` would find anything to commit, read without
    writing (no stat refresh of the index): a submit refused up front must
    leave the working copy byte for byte as it was."""
    found = porcelain.status(str(top), untracked_files="normal", optional_locks=False)
    return any(found.staged.values()) or bool(found.unstaged) or bool(found.untracked)


def head_of(top: Path) -> str:
    """HEAD's sha, "" on a branch without a commit yet."""
    with Repo(str(top)) as repo:
        try:
            return repo.head().decode()
        except KeyError:
            return ""


def commit_work(top: Path, message: str) -> Committed:
    """Stage everything (new, changed and deleted files, minus ignored ones)
    and commit it on the current branch."""
    branch = current_branch(top)
    ref = Ref(b"refs/heads/" + branch.encode())
    with Repo(str(top)) as repo:
        index = Path(repo.index_path())
        index_before = index.read_bytes() if index.exists() else None
        ref_before = repo.refs[ref] if ref in repo.refs else None  # noqa: SIM401 - dulwich refs have no get
    porcelain.add(str(top))
    staged = porcelain.status(str(top), untracked_files="no").staged
    committed = any(staged.values())
    if committed:
        porcelain.commit(str(top), message=(message or DEFAULT_MESSAGE).encode())
    with Repo(str(top)) as repo:
        return Committed(branch, repo.head().decode(), committed, index_before, ref_before)


def undo(top: Path, done: Committed) -> None:
    """Put the working copy back as `commit_work` found it: a submit refused
    after its commit leaves no commit on the branch and the index as git
    would have it (the files on disk were never touched)."""
    with Repo(str(top)) as repo:
        ref = Ref(b"refs/heads/" + done.branch.encode())
        if done.committed:
            if done.ref_before is None:
                repo.refs.remove_if_equals(ref, ObjectID(done.head.encode()))
            else:
                repo.refs.set_if_equals(ref, ObjectID(done.head.encode()), ObjectID(done.ref_before))
        index = Path(repo.index_path())
        if done.index_before is None:
            index.unlink(missing_ok=True)
        else:
            restore_index(index, done.index_before)


def restore_index(index: Path, before: bytes) -> None:
    """Write the index's old entries back, each file the commit took with
    other content than its old entry smudged the way git smudges a racily
    clean entry (size 0 in its stat data, so git reads the file again).
    The old bytes alone are not enough: their stat data may still match a
    file edited within the second it was checked out (same size, same
    mtime in seconds), and once the index is written later than that git
    trusts the stat data and sees no change at all."""
    on_disk = _blob_ids(Index(str(index)))  # what `add` just read from the files
    temp = index.with_name(f"{index.name}.gatetui-undo")
    temp.write_bytes(before)
    restored = Index(str(temp))
    if _smudge(restored, on_disk):
        restored.write()
    os.replace(temp, index)


def _blob_ids(index: Index) -> dict[bytes, bytes]:
    return {name: entry.sha for name, entry in index.items() if isinstance(entry, IndexEntry)}


def _smudge(index: Index, on_disk: dict[bytes, bytes]) -> bool:
    """Zero the size of every entry whose file on disk has other content
    (or was not read); True when any was."""
    stale = [
        name
        for name, entry in index.items()
        if isinstance(entry, IndexEntry)
        and entry.size != 0
        and not S_ISGITLINK(entry.mode)
        and not entry.skip_worktree
        and on_disk.get(name) != entry.sha
    ]
    for name in stale:
        entry = index[name]
        assert isinstance(entry, IndexEntry)
        index[name] = replace(entry, size=0)
    return bool(stale)
