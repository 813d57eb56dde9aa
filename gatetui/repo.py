"""Read-only access to the user's git repository, through dulwich.

gatetui judges a change from a base ref to a head ref in a repository that
belongs to the user.  Everything here only *reads*: no checkout, no ref or
index update, no object written, no lock file taken.  Objects are read with
dulwich (never a `git` subprocess), and contents are returned as raw bytes
(no end-of-line conversion, no filters, no LFS smudging).

Paths inside the repository are posix strings relative to the top level,
decoded from the tree's bytes with `os.fsdecode` (UTF-8, undecodable bytes
kept as surrogate escapes so they round-trip).

A commit whose tree holds an entry git itself would refuse to check out
(a name that is empty, ".", "..", contains "/", or is ".git" in any case) is
refused wherever paths are handed out or written, so that no caller ever
joins a hostile path onto a folder.

The parts live next door, each a set of plain functions GitRepo calls with
its dulwich object store: `repo_refs` reads ref names, `repo_tree` walks
trees and refuses unsafe paths, `repo_diff` finds changes and prints them,
`repo_export` writes files into a folder.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from dulwich.errors import NotGitRepository
from dulwich.graph import find_merge_base
from dulwich.objects import Commit as _DCommit
from dulwich.objects import ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo

from gatetui.changes import FileChange
from gatetui.repo_diff import Change, file_diff, merge_type_changes, raw_changes
from gatetui.repo_errors import RepoError, missing, one_line
from gatetui.repo_export import write_files
from gatetui.repo_refs import ABBREV, is_full_sha, resolve_name, split_ref, suffix_steps
from gatetui.repo_tree import blob_data, is_gitlink, lookup, user_path, walk

__all__ = ["Commit", "GitRepo", "RepoError", "digest_files"]


@dataclass(frozen=True)
class Commit:
    """The few facts about a commit that gatetui shows."""

    sha: str
    short: str
    summary: str  # first line of the message
    author: str  # "Name <email>", as recorded
    time: int  # commit time, seconds since the epoch


def digest_files(files: Mapping[str, bytes]) -> str:
    """Name a set of files: sha256 hex over the sorted (path, content) pairs.

    Every path and content is length-prefixed, so no two different sets can
    frame to the same byte stream ({"ab": b"c"} differs from {"a": b"bc"}).
    """
    items = sorted(
        (path.encode("utf-8", "surrogateescape"), bytes(data))
        for path, data in files.items()
    )
    h = hashlib.sha256(b"gatetui.files.v1\0")
    h.update(len(items).to_bytes(8, "big"))
    for path, data in items:
        h.update(len(path).to_bytes(8, "big"))
        h.update(path)
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


class GitRepo:
    """A git repository opened read-only.  Use `GitRepo.open(path)`."""

    def __init__(self, repo: Repo, path: Path) -> None:
        self._repo = repo
        self._store = repo.object_store
        self.path = path
        self._hexlen = repo.object_format.hex_length

    # ------------------------------------------------------------------ open

    @classmethod
    def open(cls, path: str | Path) -> GitRepo:
        """Open the repository whose top-level folder (or bare folder) is `path`."""
        given = Path(path).expanduser()
        if not given.exists():
            raise RepoError(
                f"no such folder: {given} (pass the repository's top-level folder)"
            )
        if not given.is_dir():
            raise RepoError(
                f"not a folder: {given} (pass the repository's top-level folder)"
            )
        where = given.resolve()
        try:
            repo = Repo(str(where))
        except NotGitRepository:
            top = _enclosing_repo(where)
            if top is not None:
                raise RepoError(
                    f"{where} is inside the git repository at {top}: "
                    f"pass the top-level folder {top}"
                ) from None
            raise RepoError(
                f"not a git repository: {where} (run `git init` or pass the "
                "repository's top-level folder)"
            ) from None
        except Exception as exc:  # unsupported format, unreadable config, ...
            raise RepoError(
                f"cannot read the git repository at {where}: {one_line(exc)} "
                "(check it with `git status`)"
            ) from None
        return cls(repo, Path(repo.path).resolve())

    def close(self) -> None:
        """Release the pack files dulwich keeps open."""
        self._repo.close()

    def __del__(self) -> None:
        # A forgotten close() must not leak open packs (dulwich would warn).
        repo = getattr(self, "_repo", None)
        if repo is not None:
            try:
                repo.close()
            except Exception:  # pragma: no cover - interpreter shutdown
                pass

    def __enter__(self) -> GitRepo:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"GitRepo({str(self.path)!r})"

    # --------------------------------------------------------------- resolve

    def resolve(self, ref: str) -> str:
        """The full hex sha of the commit `ref` names.

        Accepts a full or short (>= 4 hex digits) sha, a branch ("main",
        "agent/fix", "refs/heads/x"), a tag (annotated tags are peeled), a
        remote-tracking ref ("origin/main", "refs/remotes/origin/main"),
        "HEAD", and git's `~N`, `^N` and `^{commit}` suffixes ("HEAD~2",
        "main^2").
        """
        name, suffix = split_ref(ref, self.path)
        sha = resolve_name(self._repo, name, ref, self.path)
        for op, n in suffix_steps(suffix, ref, self.path):
            if op == "~":
                for _ in range(n):
                    sha = self._parent(sha, 1, ref)
            elif op == "^" and n:
                sha = self._parent(sha, n, ref)
        return sha

    def _parent(self, sha: str, n: int, ref: str) -> str:
        parents = self._commit_obj(sha).parents
        if len(parents) < n:
            raise RepoError(
                f"unknown ref {ref!r} in {self.path}: commit {sha[:ABBREV]} "
                f"has {len(parents)} parent(s), not {n}"
            )
        return parents[n - 1].decode("ascii")

    # --------------------------------------------------------------- commits

    def _commit_obj(self, rev: str) -> _DCommit:
        if is_full_sha(rev, self._hexlen):  # the fast path: a commit's sha
            try:
                obj = self._store[ObjectID(rev.lower().encode("ascii"))]
            except KeyError:
                obj = None
            if isinstance(obj, _DCommit):
                return obj
        obj = self._store[ObjectID(self.resolve(rev).encode("ascii"))]
        assert isinstance(obj, _DCommit)
        return obj

    def commit(self, sha: str) -> Commit:
        """Facts about the commit `sha` (any ref `resolve` accepts)."""
        c = self._commit_obj(sha)
        encoding = (c.encoding or b"utf-8").decode("ascii", "replace")
        try:
            message = c.message.decode(encoding, "replace")
        except LookupError:
            message = c.message.decode("utf-8", "replace")
        lines = message.strip().splitlines()
        hexsha = c.id.decode("ascii")
        return Commit(
            sha=hexsha,
            short=hexsha[:ABBREV],
            summary=lines[0].strip() if lines else "",
            author=c.author.decode("utf-8", "replace"),
            time=int(c.commit_time),
        )

    def merge_base(self, a: str, b: str) -> str | None:
        """The best common ancestor of `a` and `b`; None when they share none."""
        ca = self._commit_obj(a).id
        cb = self._commit_obj(b).id
        try:
            bases = find_merge_base(self._repo, [ca, cb])
        except KeyError as exc:
            raise RepoError(
                f"cannot find the merge base of {a!r} and {b!r} in {self.path}: "
                f"object {missing(exc)} is missing (the repository may be "
                "shallow; run `git fetch --unshallow`)"
            ) from None
        return bases[0].decode("ascii") if bases else None

    # ----------------------------------------------------------------- diffs

    def _tree_id(self, rev: str) -> bytes:
        return bytes(self._commit_obj(rev).tree)

    def _raw_changes(self, base: str, head: str) -> list[Change]:
        trees = (self._tree_id(base), self._tree_id(head))
        return raw_changes(self._store, trees, (base, head), self.path)

    def changes(self, base: str, head: str,
                wanted: Callable[[list[str]], bool] = lambda paths: True) -> list[FileChange]:
        """Every file that differs from `base` to `head`, renames detected.

        Sorted by path.  Contents are raw bytes; a symlink's data is its
        target.  Submodule entries are skipped.  A path whose type changed
        (file <-> symlink) is one "modify" record.  Contents are read only
        for a change whose paths are `wanted` (else None): a caller that
        scans test files never holds head's data files in memory.
        """
        out = []
        for kind, old, new in merge_type_changes(self._raw_changes(base, head)):
            paths = [_decode(e.path) for e in (old, new) if e is not None]
            read = wanted(paths)
            out.append(FileChange(
                kind=kind,  # type: ignore[arg-type]
                old_path=_decode(old.path) if old else None,
                new_path=_decode(new.path) if new else None,
                old_data=self._blob_data(old.sha) if old and read else None,
                new_data=self._blob_data(new.sha) if new and read else None,
            ))
        return out

    def unified_diff(self, base: str, head: str) -> str:
        """`git diff -M base head` style text (3 lines of context)."""
        parts: list[bytes] = []
        for kind, old, new in self._raw_changes(base, head):
            parts.append(file_diff(self._store, kind, old, new, self.path))
        return b"".join(parts).decode("utf-8", "replace")

    # ----------------------------------------------------------- tree access

    def _lookup(self, rev: str, path: str) -> tuple[int, bytes] | None:
        """(mode, sha) of the entry at `path` in `rev`'s tree; None if absent."""
        comps = user_path(path, self.path)
        return lookup(self._store, self._tree_id(rev), comps, self.path)

    def _selected(
        self, rev: str, paths: Sequence[str]
    ) -> dict[bytes, tuple[int, bytes]]:
        """The non-tree entries of `rev` equal to or under any of `paths`."""
        root = self._tree_id(rev)
        if isinstance(paths, str | bytes):
            paths = [paths]
        picked: dict[bytes, tuple[int, bytes]] = {}
        roots = [b"/".join(user_path(p, self.path)) for p in paths] or [b""]
        for prefix in roots:
            if prefix:
                found = self._lookup(rev, os.fsdecode(prefix))
                if found is None:
                    continue
                mode, sha = found
                if not stat.S_ISDIR(mode):
                    if not is_gitlink(mode):
                        picked[prefix] = (mode, sha)
                    continue
            else:
                sha = root
            for path, mode, child in walk(self._store, sha, prefix, rev, self.path):
                picked[path] = (mode, child)
        return picked

    def list_files(self, sha: str, paths: Sequence[str] = ()) -> list[str]:
        """Every file (blob or symlink) path at `sha`, optionally only those
        equal to or under one of `paths`; sorted.  Submodules are skipped."""
        return [_decode(p) for p in sorted(self._selected(sha, paths))]

    def file_ids(self, sha: str) -> dict[str, str]:
        """Every file path at `sha` with its blob id: one tree walk, so a
        caller can compare two commits' files without reading them."""
        return {_decode(p): obj.decode("ascii") for p, (_, obj) in self._selected(sha, ()).items()}

    def read_blob(self, blob_id: str) -> bytes:
        """A blob's content by id, as listed by `file_ids`."""
        return self._blob_data(blob_id.encode("ascii"))

    def read(self, sha: str, path: str) -> bytes | None:
        """The content of the file at `path` in `sha`; None when absent.

        A symlink reads as its target; a folder or a submodule reads as None.
        """
        found = self._lookup(sha, path)
        if found is None:
            return None
        mode, obj_sha = found
        if stat.S_ISDIR(mode) or is_gitlink(mode):
            return None
        return self._blob_data(obj_sha)

    def tree_sha(self, sha: str, path: str = "") -> str | None:
        """The object id of the tree or blob at `path` in `sha` ("" = root)."""
        found = self._lookup(sha, path)
        return None if found is None else found[1].decode("ascii")

    def export(self, sha: str, dest: Path, paths: Sequence[str] = ()) -> None:
        """Write the files of `sha` (or only those under `paths`) into `dest`.

        Regular files get mode 0755 or 0644 after their exec bit, symlinks
        are made as symlinks, submodules are skipped.  A tree entry that
        could land outside `dest` (a "..", "/" or ".git" name) is refused
        before anything is written, and nothing is written through a symlink.
        """
        plan = self._selected(sha, paths)  # validates every name first
        write_files(self._store, plan, Path(dest), self.path)

    # -------------------------------------------------------------- branches

    def branches(self, pattern: str = "*") -> dict[str, str]:
        """Local branch name -> sha, for the names matching the fnmatch `pattern`."""
        refs = self._repo.refs.as_dict(Ref(b"refs/heads/"))
        out: dict[str, str] = {}
        for name, sha in sorted(refs.items()):
            text = os.fsdecode(bytes(name))
            if fnmatch.fnmatchcase(text, pattern):
                out[text] = bytes(sha).decode("ascii")
        return out

    def nearest_tag(self, sha: str, limit: int = 5000) -> str | None:
        """The tag on `sha` or its closest ancestor (breadth first, at most
        `limit` commits): what a version-from-git build would call it."""
        tagged: dict[str, str] = {}
        for name in sorted(self._repo.refs.as_dict(Ref(b"refs/tags/"))):
            try:
                tagged.setdefault(self.resolve(f"refs/tags/{os.fsdecode(bytes(name))}"), os.fsdecode(bytes(name)))
            except RepoError:
                continue  # a tag on a tree or blob names no version
        queue, seen = [sha], {sha}
        while queue and len(seen) <= limit:
            current = queue.pop(0)
            if current in tagged:
                return tagged[current]
            for parent in self._commit_obj(current).parents:
                text = bytes(parent).decode("ascii")
                if text not in seen:
                    seen.add(text)
                    queue.append(text)
        return None

    # --------------------------------------------------------------- helpers

    def _blob_data(self, sha: bytes) -> bytes:
        return blob_data(self._store, sha, self.path)


# ------------------------------------------------------------------- helpers


def _enclosing_repo(where: Path) -> Path | None:
    for parent in where.parents:
        if (parent / ".git").exists():
            return parent
    return None


def _decode(path: bytes) -> str:
    return os.fsdecode(path)

