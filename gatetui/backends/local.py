"""The local fallback: the gate on this machine, in private directories.

Each gate run gets a 0700 run directory holding a fresh export of head
(`ws`), a HOME (a new user's) and TMPDIR of its own and a reports folder. Commands see an
allowlisted environment only. Side-by-side copies of an installed workspace
must each run their own code although a venv and an editable install hold
absolute paths, so every copy is shown at the original's path in a private
mount namespace: as an overlay over the installed tree (a fork costs nothing,
and each copy's writes stay its own), or as a full copy bind-mounted there
where overlays are refused. Where no mount namespace is allowed at all, the
copies are swapped into place under a lock, one at a time (slower, still
correct, and said so in the run's notes).

As root, every command also runs as the run's own uid in private namespaces
(see isolation.py): the run then sees itself at paths drawn for it under its
private /tmp, whatever the work root is, and reports are read by the supervisor after every process
of the command is gone.

This module is the backend: its choices (work root, uids, fork mode: the
supervisor's environment, or probed), the recovery of what a crashed
supervisor left, and the opening of a run. A workspace's commands are in
local_workspace.py, the layout of its trees and copies in local_layout.py,
the supervisor's file writes and report reads in local_files.py.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import replace
from functools import cached_property
from pathlib import Path

from gatetui.backends.base import LayerStore, ProgressSink, TreeExporter, Workspace
from gatetui.backends.confine import Where
from gatetui.backends.isolation import NONE, Isolation, keep_when, probe_isolation
from gatetui.backends.layers import LocalLayers
from gatetui.backends.local_home import furnish
from gatetui.backends.local_layout import BIND_SCRIPT, FORK_MODES, OVERLAY_SCRIPT, UNSHARE, chown_tree
from gatetui.backends.local_workspace import LocalWorkspace, scrubbed_env
from gatetui.backends.process import to_the_end
from gatetui.backends.uids import UID_COUNT, UID_FIRST, UidPool, kill_uid
from gatetui.errors import BackendError, BadInput

__all__ = [
    "LocalBackend",
    "LocalWorkspace",
    "default_work_root",
    "fork_mode_from_env",
    "probe_fork_mode",
    "scrubbed_env",
    "uid_range_from_env",
]

TOOLS_FRESH = 300.0  # seconds a tool that ran is taken to be there still
_TOOLS_RAN: dict[tuple[tuple[str, ...], str], float] = {}  # (argv, PATH) -> when it last ran


class LocalBackend:
    name = "local"
    measured = False  # this machine's own figures, priced at Runtime's rates: an estimate

    async def account(self) -> None:
        """No account to ask: the credit table's figures are estimates."""
        return None

    def __init__(
        self,
        work_root: Path | None = None,
        fork_mode: str | None = None,
        isolate: bool | None = None,
        uids: tuple[int, int] | None = None,
        layers: Path | None = None,
    ):
        """`layers`: the folder where dependency layers are kept between
        gates (backends/layers.py); None: every gate installs its own."""
        self.work_root = work_root or default_work_root()
        self.layers: LayerStore | None = None if layers is None else LocalLayers(layers, self.open, _folder_of)
        self.uid_range = uids or uid_range_from_env()
        self._forced_mode = fork_mode or fork_mode_from_env()
        self._isolate = isolate
        self._recovered = False
        self.on_progress: ProgressSink = lambda line: None  # nothing of its own to say yet

    @cached_property
    def fork_mode(self) -> str:
        """How copies get the original's path: "overlay", "bind" or "swap"."""
        return self._forced_mode or probe_fork_mode()

    @cached_property
    def isolation(self) -> Isolation:
        if self._isolate is False:
            return Isolation(False, False, False, False, False, "turned off by the caller", self.fork_mode)
        found = probe_isolation()
        if self._isolate and not found.full:
            raise BackendError(f"local backend cannot isolate the run: {found.reason}")
        return replace(found if self.fork_mode != "swap" else NONE, fork_mode=self.fork_mode)

    @property
    def uids(self) -> UidPool:
        first, count = self.uid_range
        return UidPool(self.work_root / ".uids", first, count)

    @property
    def notes(self) -> tuple[str, ...]:
        notes = list(self.isolation.notes())
        if self.layers is not None and not self.isolation.separate_uid:
            notes.append(
                "dependency layers are read-only by their mode only: the runs are the supervisor's "
                "own user (each layer is checked against its manifest at every use)"
            )
        if self.fork_mode == "swap":
            notes.append("no mount namespace here: the side-by-side runs take turns")
        return tuple(notes)

    def recover(self) -> int:
        """Clean what a crashed supervisor left: its uid's processes, its run
        folder. Runs once per backend, before the first workspace opens."""
        cleaned = 0
        for uid, root in self.uids.orphans():
            kill_uid(uid)
            shutil.rmtree(root, ignore_errors=True)
            self.uids.release(uid)
            cleaned += 1
        self._recovered = True
        return cleaned

    async def preflight(self, tools: tuple[tuple[str, ...], ...], indexes: tuple[str, ...] = ()) -> None:
        """A missing python3, pip or npm is the machine's problem, not the
        agent's: say which tool, before an install could fail on it. A tool
        that ran in this process a little while ago is not asked again
        (a python3 start is a tenth of a second of every gate)."""
        env = scrubbed_env(Path(tempfile.gettempdir()), Path(tempfile.gettempdir()))
        for argv in tools:
            seen = (argv, env.get("PATH", ""))
            if time.monotonic() - _TOOLS_RAN.get(seen, -TOOLS_FRESH) < TOOLS_FRESH:
                continue
            try:
                done = await asyncio.to_thread(subprocess.run, list(argv), env=env, capture_output=True, timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                done = None
            if done is None or done.returncode != 0:
                raise BackendError(
                    f"`{shlex.join(argv)}` does not run on this machine: install {argv[0]}"
                    f"{' with pip' if any('pip' in a for a in argv) else ''} (needed to gate this project)"
                )
            _TOOLS_RAN[seen] = time.monotonic()

    async def open(self, export: TreeExporter, label: str) -> LocalWorkspace:
        if shutil.which("sh") is None:
            raise BackendError("local backend cannot start: no /bin/sh on PATH")
        isolation = await asyncio.to_thread(lambda: self.isolation)
        if not self._recovered:
            await asyncio.to_thread(self.recover)
        self.work_root.mkdir(parents=True, exist_ok=True, mode=0o700)
        root = Path(tempfile.mkdtemp(prefix=f"gatetui-{_safe(label)}-", dir=self.work_root))
        root.chmod(0o700)
        uid: int | None = None
        where = Where.draw()
        try:
            for sub in ("home", "tmp", "reports", "mnt"):
                (root / sub).mkdir()
            await asyncio.to_thread(furnish, root / "home", None)  # the run's uid's below, with the tree
            await to_the_end(asyncio.to_thread(export, root / "ws"))
            if isolation.separate_uid:
                uid = self.uids.claim(root)
                for name, text in where.etc_files(uid).items():  # bound over /etc/NAME in its commands
                    (root / name).write_text(text)
                (root / "reports" / "install").mkdir()
                await asyncio.to_thread(chown_tree, (root / "ws", root / "home", root / "reports" / "install"), uid)
            mode = await asyncio.to_thread(lambda: self.fork_mode)
        except BaseException:  # a cancel included: nothing of the run is left
            if uid is not None:
                self.uids.release(uid)
            shutil.rmtree(root, ignore_errors=True)
            raise
        return LocalWorkspace(root, root / "ws", "install", mode, asyncio.Lock(), uid=uid, pool=self.uids, where=where)


def _folder_of(workspace: Workspace, name: str) -> Path:
    """Where a folder of a workspace this backend opened lies on disk."""
    assert isinstance(workspace, LocalWorkspace)
    return workspace.canonical / name


def fork_mode_from_env() -> str | None:
    """GATETUI_FORK_MODE=overlay|bind|swap: the supervisor's choice of how
    copies are made (bind where overlays are refused); unset: probed."""
    mode = os.environ.get("GATETUI_FORK_MODE", "")
    if mode and mode not in FORK_MODES:
        raise BadInput(
            f"GATETUI_FORK_MODE={mode!r} is not one of {', '.join(FORK_MODES)} "
            "(how the gate copies a workspace; unset it to let the gate probe)"
        )
    return mode or None


def uid_range_from_env() -> tuple[int, int]:
    """GATETUI_UID_RANGE=FIRST-LAST: the supervisor's choice of uids for runs
    (never the repo's: its configuration is the agent's to edit)."""
    text = os.environ.get("GATETUI_UID_RANGE", "")
    if not text:
        return UID_FIRST, UID_COUNT
    first, sep, last = text.partition("-")
    if not (sep and first.isdigit() and last.isdigit() and 1000 <= int(first) <= int(last) < 2**31 - 1):
        raise BadInput(
            f"GATETUI_UID_RANGE={text!r} is not FIRST-LAST with 1000 <= FIRST <= LAST "
            "(uids for gate runs, e.g. 1000-60000)"
        )
    return int(first), int(last) - int(first) + 1


def default_work_root() -> Path:
    """Runs live here; a fixed place so a crashed run is found at next start."""
    return Path(tempfile.gettempdir()) / f"gatetui-runs-{os.geteuid()}"


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in label)[:40]


@keep_when(lambda mode: mode != "swap")
def probe_fork_mode() -> str:
    """Try an overlay, then a bind mount, in a throwaway mount namespace."""
    scratch = Path(tempfile.mkdtemp(prefix="gatetui-probe-"))
    try:
        for sub in ("lower", "layer/up", "layer/wk"):
            (scratch / sub).mkdir(parents=True)
        for mode, script in (("overlay", OVERLAY_SCRIPT), ("bind", BIND_SCRIPT)):
            first = scratch / ("layer" if mode == "overlay" else "layer/up")
            argv = [*UNSHARE, "--", "/bin/sh", "-c", script, str(first), str(scratch / "lower"), "true"]
            try:
                done = subprocess.run(argv, capture_output=True, timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                continue
            if done.returncode == 0:
                return mode
        return "swap"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
