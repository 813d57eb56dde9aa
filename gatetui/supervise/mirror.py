"""The private mirror of submitted commits (no Textual, no writes to the user's repo).

The agent works in its own clone or worktree; `gatetui submit` hands the
supervisor a commit sha and the working copy's path. The supervisor copies
that commit's objects (and only those base lacks) from the agent's repo into
a bare mirror in its 0700 state directory. The mirror borrows the supervised
repository's objects through git's alternates file, so base is always read
from the supervised repository as it is, and nothing is ever written there.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from dulwich.errors import NotGitRepository
from dulwich.object_store import MissingObjectFinder
from dulwich.objects import ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo

from gatetui.errors import BadInput
from gatetui.git.repo import GitRepo
from gatetui.supervise.packer import fetch_as

HAVES = 1000  # base's latest commits offered to the reader: it sends only what they lack


def fetch_commit(mirror: Path, repo: Path, base: str, source: Path, sha: str, as_uid: int | None = None) -> None:
    """Copy commit `sha` from the agent's repo at `source` into `mirror`,
    read with the rights of `as_uid` when given (another user's working copy);
    BadInput when it cannot be read or holds nothing new over `base`."""
    with GitRepo.open(repo) as git:
        tip = git.resolve(base)
        target = open_mirror(mirror, git.path)
    try:
        target.refs[Ref(b"refs/heads/base")] = ObjectID(tip.encode())  # what the object walk may skip
        if ObjectID(sha.encode()) not in target.object_store:
            _copy(target, source, sha, tip, as_uid)
        _check_complete(target, sha, tip)
    except (KeyError, ValueError, OSError) as err:
        raise BadInput(f"cannot read commit {sha[:7]} from the working copy: {err}") from None
    finally:
        target.close()
    with GitRepo.open(mirror) as copy:
        if copy.resolve(sha) == tip or copy.merge_base(tip, sha) == sha:
            raise BadInput(f"{sha[:7]} is already part of {base}: nothing new to judge (commit your change first)")
        if copy.merge_base(tip, sha) is None:
            raise BadInput(f"{sha[:7]} has no common ancestor with {base}: start your branch from {base}")


def _copy(target: Repo, source: Path, sha: str, tip: str, as_uid: int | None) -> None:
    if as_uid is None:
        with agent_repo(source) as agent:
            agent.fetch(target, determine_wants=_only(ObjectID(sha.encode())))
        return
    haves = [
        entry.commit.id.decode() for entry in target.get_walker(include=[ObjectID(tip.encode())], max_entries=HAVES)
    ]
    fetch_as(as_uid, source, sha, haves, target.object_store)


def _check_complete(target: Repo, sha: str, tip: str) -> None:
    """Every object the commit needs is in the mirror (or base): a reader
    that left one out must not surface later, mid-gate, as the agent's fault."""
    store = target.object_store
    missing = [
        oid
        for oid, _ in MissingObjectFinder(store, haves=[ObjectID(tip.encode())], wants=[ObjectID(sha.encode())])
        if oid not in store
    ]
    if missing:
        raise BadInput(
            f"the working copy lacks {len(missing)} object(s) of commit {sha[:7]} "
            f"(first {missing[0].decode()[:12]}): run `git fsck` there"
        )


def open_mirror(path: Path, repo: Path) -> Repo:
    """The bare mirror at `path`, made on first use, reading `repo`'s objects."""
    if not path.exists():
        path.mkdir(mode=0o700)
        Repo.init_bare(str(path)).close()
        with Repo(str(repo)) as user:
            objects = user.object_store.path
        with Repo(str(path)) as mirror:
            mirror.object_store.add_alternate_path(objects)
    return Repo(str(path))


@contextlib.contextmanager
def agent_repo(path: Path) -> Iterator[Repo]:
    try:
        repo = Repo(str(path))
    except (NotGitRepository, OSError) as err:
        raise BadInput(f"not a git repository: {path} ({err})") from None
    try:
        yield repo
    finally:
        repo.close()


def _only(sha: ObjectID) -> Callable[[Mapping[Ref, ObjectID], int | None], list[ObjectID]]:
    """A fetch's `determine_wants` that wants one commit, whatever the refs say."""

    def wants(refs: Mapping[Ref, ObjectID], depth: int | None = None) -> list[ObjectID]:
        return [sha]

    return wants
