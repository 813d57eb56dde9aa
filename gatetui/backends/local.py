"""The local fallback: the gate on this machine, in private directories.

Each gate run gets a 0700 run directory holding a fresh export of head
(`ws`), a HOME and TMPDIR of its own and a reports folder. Commands see an
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
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TypeVar

from gatetui.backends.base import CommandResult, OutputSink, TreeExporter, Workspace
from gatetui.backends.isolation import (
    NONE, UID_COUNT, UID_FIRST, Isolation, UidPool, View, Where, keep_when, kill_uid, probe_isolation, wrap,
)
from gatetui.backends.process import run_process
from gatetui.errors import BackendError, BadInput

ENV_ALLOW = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SOURCE_DATE_EPOCH")
ENV_ALLOW_PREFIXES = ("PIP_", "NPM_CONFIG_", "npm_config_", "UV_INDEX", "UV_DEFAULT_INDEX")
ENV_NEVER = ("RUNTIME_API_KEY", "PIP_PROXY", "NPM_CONFIG__AUTH", "npm_config__auth")
BIND_SCRIPT = 'mount --bind "$0" "$1" && cd "$1" && exec /bin/sh -c "$2"'
OVERLAY_SCRIPT = (  # $3: the lower tree (a fresh export), shown at $1
    'mount -t overlay overlay -o "lowerdir=${3:-$1},upperdir=$0/up,workdir=$0/wk" "$1" '
    '&& cd "$1" && exec /bin/sh -c "$2"'
)
UNSHARE = ["unshare", "--mount", "--propagation", "private"]
FORK_MODES = ("overlay", "bind", "swap")
T = TypeVar("T")


def scrubbed_env(home: Path, tmp: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Only what installs and tests need: never the supervisor's secrets."""
    env = {k: v for k, v in os.environ.items() if k in ENV_ALLOW or k.startswith(ENV_ALLOW_PREFIXES)}
    for key in ENV_NEVER:
        env.pop(key, None)
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    env.update(HOME=str(home), TMPDIR=str(tmp), PYTHONUNBUFFERED="1", NO_COLOR="1")
    env.update(extra or {})
    return env


class LocalBackend:
    name = "local"
    measured = False  # this machine's own figures, priced at Runtime's rates: an estimate

    async def account(self) -> None:
        """No account to ask: the credit table's figures are estimates."""
        return None

    def __init__(self, work_root: Path | None = None, fork_mode: str | None = None,
                 isolate: bool | None = None, uids: tuple[int, int] | None = None):
        self.work_root = work_root or default_work_root()
        self.uid_range = uids or uid_range_from_env()
        self._forced_mode = fork_mode or fork_mode_from_env()
        self._isolate = isolate
        self._recovered = False

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
        agent's: say which tool, before an install could fail on it."""
        env = scrubbed_env(Path(tempfile.gettempdir()), Path(tempfile.gettempdir()))
        for argv in tools:
            try:
                done = await asyncio.to_thread(
                    subprocess.run, list(argv), env=env, capture_output=True, timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                done = None
            if done is None or done.returncode != 0:
                raise BackendError(
                    f"`{' '.join(argv)}` does not run on this machine: install {argv[0]}"
                    f"{' with pip' if 'pip' in argv else ''} (needed to gate this project)"
                )

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
            await _to_the_end(asyncio.to_thread(export, root / "ws"))
            if isolation.separate_uid:
                uid = self.uids.claim(root)
                for name, text in where.accounts(uid).items():  # bound over /etc/NAME in its commands
                    (root / name).write_text(text)
                (root / "reports" / "install").mkdir()
                await asyncio.to_thread(_chown_tree, (root / "ws", root / "home", root / "reports" / "install"), uid)
        except BaseException:
            if uid is not None:
                self.uids.release(uid)
            shutil.rmtree(root, ignore_errors=True)
            raise
        mode = await asyncio.to_thread(lambda: self.fork_mode)
        return LocalWorkspace(root, root / "ws", "install", mode, asyncio.Lock(),
                              uid=uid, pool=self.uids, where=where)


def fork_mode_from_env() -> str | None:
    """GATETUI_FORK_MODE=overlay|bind|swap: the supervisor's choice of how
    copies are made (bind where overlays are refused); unset: probed."""
    mode = os.environ.get("GATETUI_FORK_MODE", "")
    if mode and mode not in FORK_MODES:
        raise BadInput(f"GATETUI_FORK_MODE={mode!r} is not one of {', '.join(FORK_MODES)} "
                       "(how the gate copies a workspace; unset it to let the gate probe)")
    return mode or None


def uid_range_from_env() -> tuple[int, int]:
    """GATETUI_UID_RANGE=FIRST-LAST: the supervisor's choice of uids for runs
    (never the repo's: its configuration is the agent's to edit)."""
    text = os.environ.get("GATETUI_UID_RANGE", "")
    if not text:
        return UID_FIRST, UID_COUNT
    first, sep, last = text.partition("-")
    if not (sep and first.isdigit() and last.isdigit() and 1000 <= int(first) <= int(last) < 2**31 - 1):
        raise BadInput(f"GATETUI_UID_RANGE={text!r} is not FIRST-LAST with 1000 <= FIRST <= LAST "
                       "(uids for gate runs, e.g. 420000-429999)")
    return int(first), int(last) - int(first) + 1


def default_work_root() -> Path:
    """Runs live here; a fixed place so a crashed run is found at next start."""
    return Path(tempfile.gettempdir()) / f"gatetui-runs-{os.geteuid()}"


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in label)[:40]


def _chown_tree(paths: tuple[Path, ...], uid: int) -> None:
    for top in paths:
        os.lchown(top, uid, uid)
        for folder, dirs, files in os.walk(top):
            for name in (*dirs, *files):
                os.lchown(os.path.join(folder, name), uid, uid)


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


class LocalWorkspace:
    """One tree at the run's canonical path `ws`.

    The original holds the installed export; a copy is either an overlay
    layer (`source` holds `up/` and `wk/`) or a full copy (`source` is the
    tree), and is shown at `ws` only inside its own commands' namespace.
    """

    def __init__(self, root: Path, source: Path, label: str, mode: str, lock: asyncio.Lock,
                 uid: int | None = None, pool: UidPool | None = None, copy: Copy | None = None,
                 where: Where | None = None):
        self.root = root
        self.where = where or Where.draw()  # the run's paths as its commands see them (isolated)
        self.copy = copy  # a test run's: what it is made of besides `source`
        self.uid = uid  # the run's own uid, shared by its copies; None: not isolated
        self._pool = pool
        self.canonical = root / "ws"
        self.source = source
        self.label = label
        self.mode = mode
        self._lock = lock  # shared by a family of copies: swap mode runs one at a time
        self._forks = 0
        self._tokens: dict[str, str] = {}
        self._closed = False

    @property
    def path(self) -> str:
        return self.where.tree if self.uid is not None else str(self.canonical)

    @property
    def is_original(self) -> bool:
        return self.source == self.canonical

    @property
    def files_root(self) -> Path:
        """Where this workspace's own files are written before a command runs."""
        return self.source / "up" if self.mode == "overlay" and not self.is_original else self.source

    def report_path(self, name: str) -> str:
        """Outside the tree, under a name no other copy or run can predict."""
        folder = self.where.reports if self.uid is not None else str(self.root / "reports")
        return f"{folder}/{self._report_name(name)}"

    def scratch_path(self, name: str) -> str:
        """In the command's own /tmp where the run is isolated (a fresh tmpfs
        each command), else in the run's tmp folder."""
        folder = "/tmp" if self.uid is not None else str(self.root / "tmp")
        return f"{folder}/{name}-{os.urandom(8).hex()}"

    def _report_name(self, name: str) -> str:
        token = self._tokens.setdefault(name, os.urandom(8).hex())
        return f"{self.label}-{token}-{name}"

    async def read_report(self, name: str) -> bytes | None:
        path = (self.reports if self.uid is not None else self.root / "reports") / self._report_name(name)
        return await asyncio.to_thread(_read_regular, path)

    async def run(
        self,
        command: str,
        *,
        timeout: float,
        on_output: OutputSink,
        env: Mapping[str, str] | None = None,
        network: bool = True,
    ) -> CommandResult:
        if self.uid is not None:
            return await self._run_isolated(command, env, timeout, on_output, network)
        full_env = scrubbed_env(self.copy.home if self.copy else self.root / "home", self.root / "tmp", env)
        if self.mode == "swap":
            async with self._lock:  # the original's path holds one tree at a time
                return await self._run_swapped(command, full_env, timeout, on_output)
        if self.is_original:
            return await self._run_here(command, full_env, timeout, on_output)
        script = OVERLAY_SCRIPT if self.mode == "overlay" else BIND_SCRIPT
        lower = str(self.copy.lower) if self.copy is not None else ""
        argv = [*UNSHARE, "--", "/bin/sh", "-c", script, str(self.source), str(self.canonical), command, lower]
        return await run_process(argv, cwd=str(self.root), env=full_env, timeout=timeout,
                                 on_output=on_output)

    async def _run_isolated(self, command: str, env: Mapping[str, str] | None, timeout: float,
                            on_output: OutputSink, network: bool) -> CommandResult:
        assert self.uid is not None
        full_env = scrubbed_env(Path(self.where.home), Path("/tmp"), env)
        argv = wrap(command, self.root, self._view(), uid=self.uid, network=network)
        return await run_process(argv, cwd=str(self.root), env=full_env, timeout=timeout,
                                 on_output=on_output)

    def _view(self) -> View:
        if self.copy is None:
            return View(self.canonical, self.root / "home", self.reports, self.where)
        environment, keep = self.canonical, self.copy.keep
        if self.mode == "overlay":
            return View(self.copy.lower, self.copy.home, self.reports, self.where, layer=self.source,
                        environment=environment, keep=keep)
        return View(self.source, self.copy.home, self.reports, self.where, environment=environment, keep=keep)

    @property
    def reports(self) -> Path:
        """Each copy's own: a run cannot touch the old tests' report."""
        return self.root / "reports" / self.label

    async def _run_here(self, command: str, env: dict[str, str], timeout: float,
                        on_output: OutputSink) -> CommandResult:
        return await run_process(["/bin/sh", "-c", command], cwd=str(self.canonical),
                                 env=env, timeout=timeout, on_output=on_output)

    async def _run_swapped(self, command: str, env: dict[str, str], timeout: float,
                           on_output: OutputSink) -> CommandResult:
        if self.is_original:
            return await self._run_here(command, env, timeout, on_output)
        parked = self.root / "ws.parked"
        self.canonical.rename(parked)
        self.source.rename(self.canonical)
        try:
            return await self._run_here(command, env, timeout, on_output)
        finally:
            self.canonical.rename(self.source)
            parked.rename(self.canonical)

    async def write_files(self, files: Mapping[str, bytes | None]) -> None:
        whiteouts = self.mode == "overlay" and not self.is_original
        await asyncio.to_thread(_write_files, self.files_root, files, whiteouts, self.uid)

    async def fork(self, count: int, export: TreeExporter, keep: tuple[str, ...] = (),
                   network: bool = False) -> list[Workspace]:
        """Copies for the test runs. Each shows a fresh export of the tree at
        the original's path, never what the install left in it; of the
        install's work only the `keep` folders (the environment) come along,
        read-only where the run is isolated, and each copy starts with an
        empty home. The supervisor writes only into folders it just made.
        (`network` is decided per command here.)"""
        self._forks += 1
        fresh = self.root / f"fresh-{self._forks}"
        made: list[tuple[Path, str]] = []
        for _ in range(count):
            self._forks += 1
            made.append((self.root / f"copy-{self._forks}", f"{self.label}-copy{self._forks}"))
        kept = await _to_the_end(asyncio.to_thread(self._lay_out, export, fresh, keep, [d for d, _ in made]))
        copies: list[Workspace] = []
        for dest, label in made:
            home = dest.parent / f"{dest.name}-home"
            home.mkdir()
            copy = LocalWorkspace(self.root, dest, label, self.mode, self._lock, self.uid, self._pool,
                                  Copy(fresh, home, kept), self.where)
            if self.uid is not None:
                os.chown(home, self.uid, self.uid)
                (self.root / "reports" / label).mkdir()
                os.chown(self.root / "reports" / label, self.uid, self.uid)
            copies.append(copy)
        return copies

    def _lay_out(self, export: TreeExporter, fresh: Path, keep: tuple[str, ...],
                 dests: list[Path]) -> tuple[str, ...]:
        """The copies' trees on disk: one fresh export (an overlay's lower
        tree, or copied whole for each), with room for the environment."""
        export(fresh)
        kept = _environment(self.canonical, keep)
        _make_room(fresh, keep, kept)
        if self.uid is not None:
            _chown_tree((fresh,), self.uid)
        for dest in dests:
            if self.mode != "overlay":
                _copy_tree_now(fresh, dest)
            else:
                for sub in ("up", "wk"):
                    (dest / sub).mkdir(parents=True)
                if self.uid is not None:  # the top folder shown is the layer's
                    os.chown(dest / "up", self.uid, self.uid)
            if self.uid is None:  # no namespace of its own to show the environment in: a copy of it
                own = dest / "up" if self.mode == "overlay" else dest
                for name in kept:
                    with contextlib.suppress(FileNotFoundError):
                        (own / name).rmdir()  # the empty place made for it
                    _copy_tree_now(self.canonical / name, own / name)
        return kept

    async def close(self) -> None:
        """The original's close ends the run: no process of its uid survives.
        A second close does nothing (its uid may belong to another run by then)."""
        if self._closed:
            return
        self._closed = True
        if self.copy is not None:
            await asyncio.to_thread(shutil.rmtree, self.source, True)
            await asyncio.to_thread(shutil.rmtree, self.copy.home, True)
            return
        if self.uid is not None:
            await asyncio.to_thread(kill_uid, self.uid)
        await asyncio.to_thread(shutil.rmtree, self.root, True)
        if self.uid is not None and self._pool is not None:
            self._pool.release(self.uid)


@dataclass(frozen=True)
class Copy:
    """What a test run's copy is made of besides its own folder: the fresh
    export it starts from (an overlay's lower tree), its empty home, and the
    environment folders shown from the installed tree."""

    lower: Path
    home: Path
    keep: tuple[str, ...]


def _environment(installed: Path, names: tuple[str, ...]) -> tuple[str, ...]:
    """The environment folders the install made: real folders only. One the
    install left as a link (to the host's /etc, to the state directory) is
    the install's failure, said before anything is shown through it."""
    found = []
    for name in names:
        try:
            info = os.lstat(installed / name)
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(info.st_mode):
            raise BackendError(f"the install left {name} as something other than a folder (a link?): "
                               "it is not handed on to the test runs")
        found.append(name)
    return tuple(found)


def _make_room(fresh: Path, names: tuple[str, ...], kept: tuple[str, ...]) -> None:
    """Whatever head's tree holds at an environment folder's place goes (the
    environment comes from the install, never from git); an empty folder
    stands where the environment will be shown."""
    for name in names:
        target = fresh / name
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            shutil.rmtree(target)
        if name in kept:
            target.mkdir()


async def _to_the_end(work: Awaitable[T]) -> T:
    """Work in a thread goes on when its caller is cancelled: wait for it
    before the cancel goes on, so that close() never races a thread still
    writing into the folder it removes."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await task
        raise


def _copy_tree_now(source: Path, dest: Path) -> None:
    done = subprocess.run(["cp", "-a", "--reflink=auto", str(source), str(dest)], capture_output=True)
    if done.returncode != 0:
        raise BackendError(f"local backend could not copy the workspace: {done.stderr.decode().strip()}")


def _write_files(root: Path, files: Mapping[str, bytes | None], whiteouts: bool,
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


def _read_regular(path: Path) -> bytes | None:
    """A report is a regular file, read without following a planted link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read(64 << 20)
