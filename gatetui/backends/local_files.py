"""The supervisor's own reads and writes in a local run's folders.

Files written over a workspace's tree (base's sealed files, the gate's own
runner) and reports read back after a command are the two places where the
supervisor, root locally, touches what the code under test could have
shaped. They live apart from the workspace so that each rule is in one
short place: nothing written outside the tree, deletions in an overlay layer
as whiteouts, and a report read only if it is a regular file, never through
a planted link.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from gatetui.errors import BackendError

REPORT_CAP = 64 << 20  # bytes of a report read; a bigger one is cut, not kept whole


def write_files(root: Path, files: Mapping[str, bytes | None], whiteouts: bool,
                uid: int | None = None) -> None:
    """Write or delete files under root; in an overlay layer a deletion is a
    whiteout (a 0/0 character device), which hides the lower file. Written
    files belong to the run's uid, like the rest of its tree."""
    for rel, data in files.items():
        target = root / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            raise BackendError(f"refusing to write outside the workspace: {rel}")
        _make_parents(root, target.parent, uid)
        if data is not None:
            target.unlink(missing_ok=True)
            target.write_bytes(data)
            if uid is not None:
                os.lchown(target, uid, uid)
        elif whiteouts:
            target.unlink(missing_ok=True)
            os.mknod(target, stat.S_IFCHR | 0o600, os.makedev(0, 0))
        else:
            target.unlink(missing_ok=True)


def _make_parents(root: Path, folder: Path, uid: int | None) -> None:
    missing = []
    while folder != root and not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        made.mkdir()
        if uid is not None:
            os.lchown(made, uid, uid)


def read_regular(path: Path) -> bytes | None:
    """A report is a regular file, read without following a planted link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read(REPORT_CAP)
