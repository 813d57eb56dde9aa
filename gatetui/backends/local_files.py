"""The supervisor's own reads and writes in a local run's folders.

Files written over a workspace's tree (base's sealed files, hidden tests,
the gate's own runner files, mutants) and reports read back after a command
are the places where the supervisor, root locally, touches what the code
under test could have shaped: head commits links, and a test can plant one
between two commands. So every open here starts from a handle of the
tree's top folder and follows no link (beneath.py), in every fork mode.

What stands in the way of a path the gate writes is replaced, never
followed: a link or a file where a folder of the path should be gives way
to a real folder, and whatever is at the file's own place goes. The paths
are the gate's to decide (base's sealed tree, the gate's own folder), and
this is what an overlay copy already showed: its upper folder hides a lower
link. Deletions in an overlay layer are whiteouts (a 0/0 character device).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Mapping
from pathlib import Path

from gatetui.backends.beneath import DIRECTORY, in_the_way, open_beneath, open_folder
from gatetui.errors import BackendError

REPORT_CAP = 64 << 20  # bytes of a report read; a bigger one is cut, not kept whole
TRIES = 3  # a folder replaced this often and still not there: something keeps planting


def write_files(root: Path, files: Mapping[str, bytes | None], whiteouts: bool, uid: int | None = None) -> None:
    """Write or delete files under root; in an overlay layer a deletion is a
    whiteout, which hides the lower file. Written files and folders belong
    to the run's uid, like the rest of its tree (chowned through their own
    handles, never by path)."""
    top = open_folder(str(root))
    try:  # deletions first: one may name a link where a written file's folder goes
        for rel, data in sorted(files.items(), key=lambda item: item[1] is not None):
            parts = _plain(rel)
            folder = _folders(top, parts[:-1], uid)
            try:
                _put(folder, parts[-1], data, whiteouts, uid)
            finally:
                if folder != top:
                    os.close(folder)
    finally:
        os.close(top)


def _plain(rel: str) -> list[str]:
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise BackendError(f"refusing to write outside the workspace: {rel}")
    return parts


def _folders(top: int, parts: list[str], uid: int | None) -> int:
    """The folder `parts` names below `top`, each level a real folder."""
    here = top
    for part in parts:
        below = _folder(here, part, uid)
        if here != top:
            os.close(here)
        here = below
    return here


def _folder(dirfd: int, name: str, uid: int | None) -> int:
    """One level: opened if it is a real folder, else made one (a link or a
    file in its place removed first: unlinkat never follows the link)."""
    for _ in range(TRIES):
        try:
            return open_beneath(dirfd, name, DIRECTORY)
        except FileNotFoundError:
            pass
        except OSError as err:
            if not in_the_way(err):
                raise
            _clear(dirfd, name)
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o755, dir_fd=dirfd)
            made = open_beneath(dirfd, name, DIRECTORY)
            if uid is not None:
                os.fchown(made, uid, uid)
            return made
    raise BackendError(
        f"could not make the folder {name!r} in the workspace: something keeps putting another thing in its place"
    )


def _put(dirfd: int, name: str, data: bytes | None, whiteouts: bool, uid: int | None) -> None:
    """The file `name` in `dirfd`: whatever stood there goes, then the
    bytes (created anew, exclusively), a whiteout, or nothing."""
    _clear(dirfd, name)
    if data is None:
        if whiteouts:
            os.mknod(name, stat.S_IFCHR | 0o600, os.makedev(0, 0), dir_fd=dirfd)
        return
    fd = open_beneath(dirfd, name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if uid is not None:
            os.fchown(fd, uid, uid)
    finally:
        os.close(fd)


def _clear(dirfd: int, name: str) -> None:
    """Whatever is at `name` in `dirfd` is gone: a link itself (never what
    it points at), a file, or a whole folder (rmtree by handle, which
    follows no link either)."""
    try:
        os.unlink(name, dir_fd=dirfd)
    except FileNotFoundError:
        return
    except OSError as err:
        if err.errno not in (errno.EISDIR, errno.EPERM):
            raise
        shutil.rmtree(name, dir_fd=dirfd)


def read_regular(folder: Path, name: str) -> bytes | None:
    """A report is a regular file in its folder, read without following a
    planted link (the folder is the gate's; the name, a link a run made)."""
    try:
        top = open_folder(str(folder))
    except OSError:
        return None
    try:
        fd = open_beneath(top, name, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    finally:
        os.close(top)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read(REPORT_CAP)
