"""What keeps the code under test away from the gate on this machine.

As root, every command of a run executes as an unprivileged uid of its own
(given an account in the /etc/passwd it sees), in private namespaces: a mount
namespace whose /tmp is a fresh tmpfs holding only the run (its tree and
reports, at paths drawn per run) and whose /home holds only the run's home,
a pid namespace (when the command ends, the kernel kills every
process it left behind, however detached), and for the test runs a network
namespace with loopback alone. What the run sees around it is an ordinary
machine's (see `Where`): nothing there names the gate. Resource limits cap processes, file sizes and
core dumps. The supervisor's state directory, other runs' workspaces and the
supervisor's home are then out of reach by plain directory permissions.

Where this is not possible (not root, no `unshare`/`setpriv`), commands run
as the supervisor's user and `Isolation.notes` says which protections are
missing: never a silent downgrade.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from gatetui.backends.confine import View, Where, wrap
from gatetui.backends.uids import UID_COUNT, UID_FIRST

TOOLS = ("unshare", "setpriv", "mount")
T = TypeVar("T")


def keep_when(good: Callable[[T], bool]) -> Callable[[Callable[[], T]], Callable[[], T]]:
    """functools.cache for a probe, except that a result short of `good` is
    not kept: a probe that timed out on a loaded machine, or ran while PATH
    lacked the tools, must not leave the process without isolation for the
    rest of its life. The next backend probes again (a few milliseconds)."""

    def decorate(probe: Callable[[], T]) -> Callable[[], T]:
        kept: list[T] = []

        @functools.wraps(probe)
        def cached() -> T:
            if kept:
                return kept[0]
            found = probe()
            if good(found):
                kept.append(found)
            return found

        return cached

    return decorate


@dataclass(frozen=True)
class Isolation:
    """Which protections this machine enforces, for notes and the JSON."""

    separate_uid: bool
    network_namespace: bool
    pid_namespace: bool
    private_tmp: bool
    limits: bool
    reason: str = ""  # why the missing ones are missing
    fork_mode: str = ""  # how the test runs' copies are made: overlay, bind or swap

    @property
    def full(self) -> bool:
        return all((self.separate_uid, self.network_namespace, self.pid_namespace, self.private_tmp, self.limits))

    def notes(self) -> tuple[str, ...]:
        if self.full:
            return ()
        missing = [
            words
            for on, words in (
                (self.separate_uid, "log hiding (install and tests run as the supervisor's own user)"),
                (self.network_namespace, "no network for the tests"),
                (self.pid_namespace, "killing every process a test leaves behind"),
                (self.private_tmp, "a private /tmp"),
                (self.limits, "process and file-size limits"),
            )
            if not on
        ]
        return (f"local backend does not enforce: {'; '.join(missing)} ({self.reason})",)

    def to_json(self) -> dict[str, object]:
        return {
            "separate_uid": self.separate_uid,
            "network_namespace": self.network_namespace,
            "pid_namespace": self.pid_namespace,
            "private_tmp": self.private_tmp,
            "limits": self.limits,
            "enforced": self.full,
            "reason": self.reason,
            "fork_mode": self.fork_mode,
        }


NONE = Isolation(False, False, False, False, False)


def _enforced(found: Isolation) -> bool:
    return found.full


@keep_when(_enforced)
def probe_isolation() -> Isolation:
    """Run the real wrapper once with `true`: the only reliable test."""
    if os.geteuid() != 0:
        return Isolation(False, False, False, False, False, "not running as root")
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        return Isolation(False, False, False, False, False, f"missing {', '.join(missing)}")
    scratch = Path(tempfile.mkdtemp(prefix="gatetui-probe-"))
    try:
        for sub in ("ws", "home", "reports", "mnt"):
            (scratch / sub).mkdir()
        view = View(scratch / "ws", scratch / "home", scratch / "reports", Where.draw())
        argv = wrap("true", scratch, view, uid=UID_FIRST + UID_COUNT - 1, network=False)
        try:
            done = subprocess.run(argv, capture_output=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as err:
            return Isolation(False, False, False, False, False, f"namespaces refused: {err}")
        if done.returncode != 0:
            why = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["unknown"]
            return Isolation(False, False, False, False, False, f"namespaces refused: {why[0]}")
        return Isolation(True, True, True, True, True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
