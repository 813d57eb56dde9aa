"""A commit's tree, read safely: entries looked up and walked, blobs read.

Two kinds of path are refused before they can reach a folder.  A tree entry
git itself would refuse to check out (a name that is empty, ".", "..",
contains "/" or NUL, or is ".git" in any case) is refused wherever paths are
handed out; a caller's path that is absolute or names ".." or ".git" is
refused before it is looked up.  Submodules (gitlinks) are never followed.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from dulwich.object_store import BaseObjectStore
from dulwich.objects import Blob, ObjectID, ShaFile, Tree

from gatetui.git.errors import RepoError

_S_IFGITLINK = 0o160000


def is_gitlink(mode: int) -> bool:
    """Whether a tree entry's mode is a submodule's commit."""
    return stat.S_IFMT(mode) == _S_IFGITLINK


def user_path(path: str, repo_path: Path) -> list[bytes]:
    """Split a caller's repository-relative path; refuse ones that could escape."""
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if text.startswith("/") or text.startswith("\\") or re.match(r"[A-Za-z]:", text):
        raise RepoError(f"path {text!r} is absolute: give it relative to the top of {repo_path}")
    comps = [c for c in text.split("/") if c not in ("", ".")]
    for comp in comps:
        if comp == ".." or comp.lower() == ".git" or "\0" in comp:
            raise RepoError(f"refusing path {text!r}: it must stay inside {repo_path} and not name '..' or '.git'")
    return [os.fsencode(c) for c in comps]


def fetch(store: BaseObjectStore, sha: bytes, repo_path: Path) -> ShaFile:
    """An object by id; a RepoError naming it when the repository lacks it
    (a shallow or damaged clone), never dulwich's bare KeyError."""
    try:
        return store[ObjectID(sha)]
    except KeyError:
        raise RepoError(
            f"object {sha.decode('ascii', 'replace')} is missing from {repo_path} (a shallow or damaged "
            "clone: run `git fetch --unshallow`, or check it with `git fsck`)"
        ) from None


def lookup(store: BaseObjectStore, root: bytes, comps: list[bytes], repo_path: Path) -> tuple[int, bytes] | None:
    """(mode, sha) of the entry at `comps` below the tree `root`; None if absent."""
    mode, sha = stat.S_IFDIR, root
    for comp in comps:
        if not stat.S_ISDIR(mode):
            return None
        tree = fetch(store, sha, repo_path)
        if not isinstance(tree, Tree) or comp not in tree:
            return None
        mode, sha = tree[comp]
    return mode, sha


def walk(
    store: BaseObjectStore, tree_sha: bytes, prefix: bytes, rev: str, repo_path: Path
) -> Iterator[tuple[bytes, int, bytes]]:
    """Every non-tree entry below a tree as (path, mode, sha); gitlinks skipped."""
    stack = [(tree_sha, prefix)]
    while stack:
        sha, base = stack.pop()
        tree = fetch(store, sha, repo_path)
        if not isinstance(tree, Tree):
            raise RepoError(
                f"commit {rev!r} in {repo_path} is damaged: {sha.decode()} is not a tree (check it with `git fsck`)"
            )
        for name, mode, child in tree.iteritems():
            path = base + b"/" + name if base else name
            _check_name(name, path, rev, repo_path)
            if stat.S_ISDIR(mode):
                stack.append((child, path))
            elif is_gitlink(mode):
                continue
            else:
                yield path, mode, child


def blob_data(store: BaseObjectStore, sha: bytes, repo_path: Path) -> bytes:
    """A blob's raw content; a RepoError when `sha` names anything else."""
    obj = fetch(store, sha, repo_path)
    if not isinstance(obj, Blob):
        raise RepoError(
            f"object {sha.decode('ascii')} in {repo_path} is a "
            f"{obj.type_name.decode('ascii')}, not a file (check it with "
            "`git fsck`)"
        )
    return obj.as_raw_string()


def check_tree_path(path: bytes, rev: str, repo_path: Path) -> None:
    """Refuse `rev` when any component of the tree path `path` is unsafe."""
    for comp in path.split(b"/"):
        _check_name(comp, path, rev, repo_path)


def _check_name(name: bytes, path: bytes, rev: str, repo_path: Path) -> None:
    if not _safe_name(name):
        raise RepoError(
            f"refusing commit {rev!r} in {repo_path}: its tree holds the "
            f"unsafe path {os.fsdecode(path)!r} (an entry named '..', '.git' "
            "or with a '/', which git refuses to check out)"
        )


def _safe_name(name: bytes) -> bool:
    return name not in (b"", b".", b"..") and b"/" not in name and b"\0" not in name and name.lower() != b".git"
