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

The parts live next door: `handle` opens and closes the repository,
`commits` resolves names to commits; and plain functions GitRepo calls with
its dulwich object store: `refs` reads ref names, `tree` walks trees and
refuses unsafe paths, `diff` finds changes and prints them, `export` writes
files into a folder, `stream` reads a blob a chunk at a time.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from gatetui.git.changes import FileChange
from gatetui.git.commits import Commit, CommitReading
from gatetui.git.diff import Change, file_diff, merge_type_changes, raw_changes
from gatetui.git.errors import RepoError
from gatetui.git.export import write_files
from gatetui.git.tree import blob_data, is_gitlink, lookup, user_path, walk

__all__ = ["Commit", "GitRepo", "RepoError", "digest_files"]


def digest_files(files: Mapping[str, bytes]) -> str:
    """Name a set of files: sha256 hex over the sorted (path, content) pairs.

    Every path and content is length-prefixed, so no two different sets can
    frame to the same byte stream ({"ab": b"c"} differs from {"a": b"bc"}).
    """
    items = sorted((path.encode("utf-8", "surrogateescape"), bytes(data)) for path, data in files.items())
    h = hashlib.sha256(b"gatetui.files.v1\0")
    h.update(len(items).to_bytes(8, "big"))
    for path, data in items:
        h.update(len(path).to_bytes(8, "big"))
        h.update(path)
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


class GitRepo(CommitReading):
    """A git repository opened read-only.  Use `GitRepo.open(path)`: its
    commits and refs (commits.py), its trees, changes and exports here."""

    def _tree_id(self, rev: str) -> bytes:
        return bytes(self._commit_obj(rev).tree)

    def _raw_changes(self, base: str, head: str) -> list[Change]:
        trees = (self._tree_id(base), self._tree_id(head))
        return raw_changes(self._store, trees, (base, head), self.path)

    def changes(
        self, base: str, head: str, wanted: Callable[[list[str]], bool] = lambda paths: True
    ) -> list[FileChange]:
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
            out.append(
                FileChange(
                    kind=kind,  # type: ignore[arg-type]
                    old_path=_decode(old.path) if old else None,
                    new_path=_decode(new.path) if new else None,
                    old_data=self._blob_data(old.sha) if old and read else None,
                    new_data=self._blob_data(new.sha) if new and read else None,
                )
            )
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

    def _selected(self, rev: str, paths: Sequence[str]) -> dict[bytes, tuple[int, bytes]]:
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

    def link_target(self, sha: str, path: str) -> bytes | None:
        """Where the symlink at `path` in `sha` points, as committed; None
        when the entry there is no symlink (or absent)."""
        found = self._lookup(sha, path)
        if found is None or not stat.S_ISLNK(found[0]):
            return None
        return self._blob_data(found[1])

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

    def _blob_data(self, sha: bytes) -> bytes:
        return blob_data(self._store, sha, self.path)


def _decode(path: bytes) -> str:
    return os.fsdecode(path)
