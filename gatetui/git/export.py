"""A commit's files written into a folder, never through a symlink.

The caller hands over a plan whose every name was already checked (see
`repo_tree.walk`); this writes it.  Folders are made one level at a time and
each is checked with lstat, so a symlink or a file in the way is refused, not
followed; files are created with O_EXCL and O_NOFOLLOW; symlinks are made as
symlinks.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from dulwich.object_store import BaseObjectStore

from gatetui.git.errors import RepoError, one_line
from gatetui.git.stream import blob_chunks
from gatetui.git.tree import blob_data


def write_files(store: BaseObjectStore, plan: Mapping[bytes, tuple[int, bytes]], dest: Path, repo_path: Path) -> None:
    """Write `plan` (tree path -> (mode, blob sha)) into `dest`, made if missing.

    Regular files get mode 0755 or 0644 after their exec bit.
    """
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RepoError(f"cannot create {dest}: {one_line(exc)}") from None
    if not dest.is_dir():
        raise RepoError(f"cannot export into {dest}: it is not a folder")
    root = os.fsencode(dest)
    made: set[bytes] = set()
    for path in sorted(plan):
        mode, obj_sha = plan[path]
        parts = path.split(b"/")
        folder = _make_folders(root, parts[:-1], dest, made)
        target = os.path.join(folder, parts[-1])
        _clear_for_file(target, dest)
        try:
            if stat.S_ISLNK(mode):
                os.symlink(blob_data(store, obj_sha, repo_path), target)
            else:
                _write_file(target, _chunks(store, obj_sha, repo_path), 0o755 if mode & 0o111 else 0o644)
        except (OSError, ValueError) as exc:
            raise RepoError(f"cannot write {os.fsdecode(target)}: {one_line(exc)}") from None


def write_extra(dest: Path, files: Mapping[str, bytes]) -> None:
    """Plain files the gate itself adds to an exported tree (a version file
    the build writes by design), each only where the tree leaves room: a
    path that is not plain, a folder on the way that is not a real folder
    (a link head committed), or anything already at the path, and that
    file is not written. Nothing is written through a link."""
    root = os.fsencode(dest)
    for rel, data in sorted(files.items()):
        parts = os.fsencode(rel).split(b"/")
        if not rel or rel.startswith("/") or any(part in (b"", b".", b"..", b".git") for part in parts):
            continue
        try:
            folder = _make_folders(root, parts[:-1], dest, set())
            _write_file(os.path.join(folder, parts[-1]), [data], 0o644)
        except (RepoError, OSError):
            continue  # the tree holds something in its way: head's, and head's to answer for


def _make_folders(root: bytes, parts: list[bytes], dest: Path, made: set[bytes]) -> bytes:
    """The folder `parts` names below `root`, each level made (and checked) once."""
    where = root
    for part in parts:
        where = os.path.join(where, part)
        if where not in made:
            _ensure_dir(where, dest)
            made.add(where)
    return where


def _ensure_dir(where: bytes, dest: Path) -> None:
    try:
        st = os.lstat(where)
    except FileNotFoundError:
        try:
            os.mkdir(where, 0o755)
        except OSError as exc:
            raise RepoError(f"cannot create {os.fsdecode(where)}: {one_line(exc)}") from None
        st = os.lstat(where)
    if not stat.S_ISDIR(st.st_mode):  # a symlink (or a file) in the way
        raise RepoError(
            f"cannot export into {dest}: {os.fsdecode(where)} exists and is not a folder (export into an empty folder)"
        )


def _clear_for_file(target: bytes, dest: Path) -> None:
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        raise RepoError(f"cannot export into {dest}: {os.fsdecode(target)} is a folder (export into an empty folder)")
    os.unlink(target)


def _chunks(store: BaseObjectStore, sha: bytes, repo_path: Path) -> Iterator[bytes]:
    """A file's bytes as a stream: a big file never sits whole in memory."""
    return blob_chunks(store, sha, lambda missing: blob_data(store, missing, repo_path))


def _write_file(target: bytes, chunks: Iterable[bytes], mode: int) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_BINARY", 0)
    fd = os.open(target, flags, mode)
    try:
        for chunk in chunks:
            view = memoryview(chunk)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
