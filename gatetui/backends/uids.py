"""The uids a local run's commands execute as: one per run, drawn from the
machine's range for ordinary users (so it reads as a person's, not as a
range documented for the gate), never one the machine names, never one a
live process holds; and the end of every process of a run's uid."""

from __future__ import annotations

import contextlib
import grp
import json
import os
import pwd
import signal
import time
from pathlib import Path

from gatetui.backends.process import pid_alive


def login_range(path: str = "/etc/login.defs") -> tuple[int, int]:
    """The machine's range for ordinary users' uids (UID_MIN-UID_MAX, else
    1000-60000), as (first, count): a run's uid looks like a person's, not
    like a documented range of the gate's."""
    found = {"UID_MIN": 1000, "UID_MAX": 60000}
    try:
        for line in Path(path).read_text(errors="replace").splitlines():
            words = line.split()
            if len(words) == 2 and words[0] in found and words[1].isdigit():
                found[words[0]] = int(words[1])
    except OSError:
        pass
    first, last = max(found["UID_MIN"], 1000), found["UID_MAX"]
    return (first, last - first + 1) if last > first + 100 else (1000, 59001)


UID_FIRST, UID_COUNT = login_range()


class UidPool:
    """Hands out a uid no other live run holds, by O_EXCL claim files, and
    none the machine knows as a user or a group (its files would be the
    run's to read)."""

    def __init__(self, folder: Path, first: int = UID_FIRST, count: int = UID_COUNT):
        self.folder, self.first, self.count = folder, first, count

    def claim(self, run_root: Path) -> int:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        start = int.from_bytes(os.urandom(4), "little") % self.count
        for step in range(self.count):
            uid = self.first + (start + step) % self.count
            if known_id(uid):
                continue
            claim = self.folder / str(uid)
            try:
                fd = os.open(claim, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                continue
            with os.fdopen(fd, "w") as out:
                json.dump({"pid": os.getpid(), "root": str(run_root)}, out)
            if not uid_processes(uid):
                return uid
            claim.unlink(missing_ok=True)  # a stranger uses it: leave it alone
        raise OSError("no free uid left for a gate run")

    def release(self, uid: int) -> None:
        (self.folder / str(uid)).unlink(missing_ok=True)

    def orphans(self) -> list[tuple[int, Path]]:
        """Claims whose supervisor died: (uid, run root) to clean."""
        found = []
        for claim in self.folder.glob("[0-9]*") if self.folder.is_dir() else ():
            with contextlib.suppress(OSError, ValueError):
                info = json.loads(claim.read_text())
                if not pid_alive(int(info["pid"])):
                    found.append((int(claim.name), Path(info["root"])))
        return found


def known_id(number: int) -> bool:
    """Whether the machine's user or group databases (NSS: files, LDAP...)
    name this id."""
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(number)
            return True
        except KeyError:
            continue
    return False


def uid_processes(uid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if entry.stat().st_uid == uid:
                pids.append(int(entry.name))
    return pids


def kill_uid(uid: int, patience: float = 5.0) -> int:
    """SIGKILL every process of uid until none is left; returns how many."""
    killed = 0
    deadline = time.monotonic() + patience
    while (pids := uid_processes(uid)) and time.monotonic() < deadline:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        time.sleep(0.02)
    return killed
