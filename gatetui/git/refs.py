"""Ref names to commit shas, in the order `git rev-parse` tries them.

A name is tried as a full sha, then as a ref (NAME, refs/NAME, tags, heads,
remotes, a remote's HEAD), then as a short sha; annotated tags are peeled.
Only reads: refs are followed through their symrefs, never written, and a
hostile name ("../config") never becomes a path under .git, because every
candidate is a well-formed ref name or a top-level name shaped like HEAD.

The `~N` / `^N` suffixes are only parsed here: walking to a parent needs a
commit, which `GitRepo.resolve` reads.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterator
from pathlib import Path

from dulwich.object_store import BaseObjectStore
from dulwich.objects import Commit as _DCommit
from dulwich.objects import ObjectID, ShaFile, Tag
from dulwich.refs import Ref, RefsContainer, SymrefLoop, check_ref_format
from dulwich.repo import Repo

from gatetui.git.errors import RepoError

ABBREV = 7  # a short sha, as gatetui prints it
_MIN_SHORT_SHA = 4
_MAX_TAG_DEPTH = 32

_TOP_LEVEL_REF = re.compile(r"[A-Z][A-Z_]*\Z")
_HEX = re.compile(r"[0-9a-fA-F]+\Z")
_SUFFIX = re.compile(r"\^\{(?:commit)?\}|(~|\^)(\d*)")


def is_full_sha(text: str, hexlen: int) -> bool:
    """Whether `text` is spelled like a full sha of this repository's format."""
    return len(text) == hexlen and bool(_HEX.match(text))


def split_ref(ref: str, repo_path: Path) -> tuple[str, str]:
    """`ref` cut into its name and its suffix: "HEAD~2^2" -> ("HEAD", "~2^2")."""
    if not isinstance(ref, str) or not ref or ref != ref.strip():
        raise _unknown(ref, repo_path)
    cut = min((i for i in (ref.find("~"), ref.find("^")) if i >= 0), default=-1)
    name, suffix = (ref, "") if cut < 0 else (ref[:cut], ref[cut:])
    if not name:
        raise _unknown(ref, repo_path)
    return name, suffix


def suffix_steps(suffix: str, ref: str, repo_path: Path) -> Iterator[tuple[str | None, int]]:
    """The steps of a suffix as (op, n): op is "~", "^", or None for `^{}` and
    `^{commit}` (the sha already names a commit); a bare "~" or "^" means 1.

    Read lazily, so a step that cannot be read is reported only after the
    steps before it were taken, as git reports it.
    """
    pos = 0
    while pos < len(suffix):
        m = _SUFFIX.match(suffix, pos)
        if m is None:
            raise RepoError(
                f"unknown ref {ref!r} in {repo_path}: cannot read {suffix[pos:]!r} (use NAME, NAME~N or NAME^N)"
            )
        op, digits = m.group(1), m.group(2)
        yield op, int(digits) if digits else 1
        pos = m.end()


def resolve_name(repo: Repo, name: str, ref: str, repo_path: Path) -> str:
    """The full hex sha of the commit `name` (a ref without suffix) names."""
    store = repo.object_store
    hexlen = repo.object_format.hex_length
    if name == "@":
        name = "HEAD"
    is_hex = bool(_HEX.match(name))
    if is_hex and len(name) == hexlen:
        sha = name.lower().encode("ascii")
        if ObjectID(sha) in store:
            return _peel_to_commit(store, sha, ref, repo_path)
    for candidate in _ref_candidates(name):
        target = _read_ref(repo.refs, candidate, hexlen)
        if target is not None:
            return _peel_to_commit(store, target, ref, repo_path)
    if is_hex and _MIN_SHORT_SHA <= len(name) < hexlen:
        found = _resolve_short(store, name.lower(), ref, repo_path)
        if found is not None:
            return found
    branches = sorted(os.fsdecode(bytes(b)) for b in repo.refs.as_dict(Ref(b"refs/heads/")))
    if is_hex and len(name) < _MIN_SHORT_SHA:
        hint = f" (a short sha needs at least {_MIN_SHORT_SHA} characters)"
    elif not branches:
        hint = " (the repository has no commits yet: commit first)"
    else:
        near = difflib.get_close_matches(name, branches, n=1)
        shown = ", ".join(branches[:_SHOWN]) + (f" and {len(branches) - _SHOWN} more" if len(branches) > _SHOWN else "")
        hint = f" ({f'did you mean {near[0]}? ' if near else ''}branches: {shown})"
    raise _unknown(ref, repo_path, hint)


_SHOWN = 8  # branches named in an unknown-ref error


def _unknown(ref: object, repo_path: Path, hint: str = "") -> RepoError:
    return RepoError(f"unknown ref {ref!r} in {repo_path}: no branch, tag or commit by that name{hint}")


def _ref_candidates(name: str) -> list[bytes]:
    """git's rev-parse order: NAME, refs/NAME, tags, heads, remotes, remote HEAD.

    A bare top-level name is only tried when it looks like HEAD, ORIG_HEAD...
    and every other candidate must be a well-formed ref name, so a hostile
    name ("../config") never becomes a path under .git.
    """
    raw = os.fsencode(name)
    top = [raw] if _TOP_LEVEL_REF.match(name) else []
    full = [raw] if raw.startswith(b"refs/") and check_ref_format(Ref(raw)) else []
    rest = [
        c
        for c in (
            b"refs/" + raw,
            b"refs/tags/" + raw,
            b"refs/heads/" + raw,
            b"refs/remotes/" + raw,
            b"refs/remotes/" + raw + b"/HEAD",
        )
        if check_ref_format(Ref(c))
    ]
    return list(dict.fromkeys(top + full + rest))


def _read_ref(refs: RefsContainer, name: bytes, hexlen: int) -> bytes | None:
    """The sha ref `name` holds (symrefs followed); None when absent or malformed."""
    try:
        _chain, value = refs.follow(Ref(name))
    except (SymrefLoop, KeyError, OSError, ValueError):
        return None
    if value is None:
        return None
    sha = bytes(value).strip()[:hexlen]
    if len(sha) != hexlen or not _HEX.match(sha.decode("latin-1")):
        return None
    return sha.lower()


def _resolve_short(store: BaseObjectStore, prefix: str, ref: str, repo_path: Path) -> str | None:
    """The one commit whose sha starts with `prefix`; None when no object does."""
    try:
        matches = sorted(set(store.iter_prefix(prefix.encode("ascii"))))
    except (KeyError, OSError, ValueError):
        matches = []
    commits: set[str] = set()
    kinds: list[str] = []
    for sha in matches:
        obj = _peel(store, sha)
        if isinstance(obj, _DCommit):
            commits.add(obj.id.decode("ascii"))
        elif obj is not None:
            kinds.append(obj.type_name.decode("ascii"))
    if len(commits) == 1:
        return commits.pop()
    if len(commits) > 1:
        raise RepoError(
            f"ambiguous short sha {ref!r} in {repo_path}: {len(commits)} commits start with it; give more characters"
        )
    if kinds:
        raise RepoError(f"ref {ref!r} in {repo_path} names a {kinds[0]}, not a commit")
    return None


def _peel(store: BaseObjectStore, sha: bytes) -> ShaFile | None:
    """The object `sha` names, with tags followed; None when missing."""
    try:
        obj = store[ObjectID(sha)]
        for _ in range(_MAX_TAG_DEPTH):
            if not isinstance(obj, Tag):
                return obj
            obj = store[obj.object[1]]
    except (KeyError, ValueError, OSError):
        return None
    return None


def _peel_to_commit(store: BaseObjectStore, sha: bytes, ref: str, repo_path: Path) -> str:
    obj = _peel(store, sha)
    if obj is None:
        raise RepoError(
            f"ref {ref!r} in {repo_path} points to a missing object "
            f"{sha.decode('ascii')} (the repository may be shallow or "
            "damaged; check it with `git fsck`)"
        )
    if not isinstance(obj, _DCommit):
        raise RepoError(f"ref {ref!r} in {repo_path} names a {obj.type_name.decode('ascii')}, not a commit")
    return obj.id.decode("ascii")
