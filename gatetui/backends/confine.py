"""The command line that confines one command of a run: the script pid 1 of
its new namespaces runs as root to show the run its tree, home, reports and
dependency layer, bind the run's own /etc files and cap its resources, then
become the command's unprivileged shell; and where those appear, drawn per
run so that nothing the run sees names the gate (see isolation.py for why,
and for the probe that tells whether this machine can do it)."""

from __future__ import annotations

import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path

from gatetui.backends.layer_files import mirror_points
from gatetui.backends.layers import CACHE

WORDS = (
    "app",
    "api",
    "core",
    "web",
    "lib",
    "tools",
    "service",
    "project",
    "work",
    "src",
    "build",
    "repo",
    "code",
    "main",
    "data",
    "server",
    "client",
    "utils",
    "engine",
    "backend",
    "site",
    "pkg",
    "dev",
    "ci",
)

NPROC_LIMIT = 4096  # per uid: a fork bomb stops here, the machine does not
FSIZE_LIMIT = 8 << 30  # bytes: a test that fills the disk fails its run


def _supervisor_bin() -> str:
    """The supervisor's own environment's executables (uv, which the python
    stack's install runs by its absolute path), where they lie under /tmp:
    each command gets a private /tmp, so they are shown read-only at their
    own path there (a supervisor installed under /tmp, as a CI clone is,
    then installs with uv like any other). Elsewhere they are in sight
    already; a path with a line break is never shown."""
    folder = os.path.dirname(os.path.abspath(sys.executable))
    return folder if folder.startswith("/tmp/") and "\n" not in folder and os.path.isdir(folder) else ""


SUPERVISOR_BIN = _supervisor_bin()
TMPFS_SIZE = "4g"
SHARED_SIZE = "1g"  # each of /var/tmp and /dev/shm: a cap, not a reservation
ETC_FILES = ("passwd", "group", "hostname", "hosts")  # the run's own, bound over the host's (Where.etc_files)


# Pid 1 of the new namespaces (pid1.py, run by this interpreter) runs as
# root to show the run its tree (an overlay on a fresh export, or a folder),
# home and reports where `Where` drew them (the tree and reports under /tmp,
# the home under /home, alone there, or /tmp), with the run's own
# /etc/passwd, group, hostname and hosts bound over the host's and its host
# name set; the installed tree's folders the run keeps (a test run's
# environment) read-only at their place in the tree; a dependency layer (the
# supervisor's) read-only at its place, its folder `deps_at` also over the
# tree's (npm's node_modules: a link or file of head's at that name goes
# first, so nothing is shown through it); the command's bytecode folder (its
# pycache prefix) made root's and read-only to the command, so that no code
# of the run can plant bytecode there for a module imported later (its own
# modules compile in memory), with the layer's cached bytecode shown in it.
# Every folder anyone may write on a host gets an empty tmpfs of the
# command's own (/var/tmp, /dev/shm, /run/lock; a test run's whole /run):
# what the code under test leaves there (hidden tests copied out, a note for
# the next run) is gone with the command, and the host's files are not shown.
# An install keeps the host's /run, where the resolver's files may live.
# The rest of the host's root file system is read-only to the command (a
# folder anyone may write that this list misses is no way out either). Then
# pid 1 becomes the command's unprivileged shell (exec: pid 1 is then
# `/bin/sh -c COMMAND`, as in a container, and still reaps what the command
# leaves).
PID1 = str(Path(__file__).with_name("pid1.py"))


@dataclass(frozen=True)
class Where:
    """Where a run sees its tree, home and reports, and the host name and
    account it gets: drawn per run (the same for its copies: a venv holds
    absolute paths), no fixed value for code to recognise the gate by, and
    each of the shape an ordinary machine's has: a home at /home/NAME for a
    user NAME with an account, a host name that resolves."""

    tree: str
    home: str
    reports: str
    hostname: str
    user: str  # the run's uid's name in the /etc/passwd it sees
    layer: str = ""  # where a dependency layer is shown, read-only, when the run has one
    scratch: str = ""  # the suffix of the run's scratch folders (see scratch_path)

    @classmethod
    def draw(cls) -> Where:
        def word() -> str:
            return WORDS[secrets.randbelow(len(WORDS))]

        top = f"/tmp/{word()}{secrets.randbelow(1000) if secrets.randbelow(2) else ''}"
        taken = {line.split(":", 1)[0] for line in _host_file("/etc/passwd").splitlines()}
        user = f"{word()}{secrets.randbelow(100)}"
        while user in taken:
            user = f"{word()}{secrets.randbelow(10_000)}"
        # a host without a real /home (the script makes no folder on the host's disk) keeps it under /tmp
        home = (
            f"/home/{user}"
            if os.path.isdir("/home") and not os.path.islink("/home")
            else f"/tmp/{word()}-{secrets.token_hex(3)}"
        )
        return cls(
            tree=f"{top}/{word()}",
            home=home,
            reports=f"/tmp/.{secrets.token_hex(6)}",
            hostname=secrets.token_hex(6),
            user=user,
            layer=f"/tmp/{word()}{secrets.token_hex(2)}",
            scratch=secrets.token_hex(8),
        )

    def scratch_path(self, name: str) -> str:
        """A folder a command makes for its own use, on its own /tmp."""
        return f"/tmp/{name}-{self.scratch}"

    def etc_files(self, uid: int) -> dict[str, str]:
        """The files of /etc the run sees as its own (ETC_FILES): the host's
        passwd and group with a line for its uid (tests that ask who they run
        as get an answer, as a user made by adduser would: a uid with no name
        is a sign of the gate), and its host name in /etc/hostname and
        /etc/hosts (it resolves, as on any machine)."""
        passwd = _host_file("/etc/passwd").rstrip("\n")
        group = _host_file("/etc/group").rstrip("\n")
        hosts = _host_file("/etc/hosts").rstrip("\n")
        shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
        return {
            "passwd": f"{passwd}\n{self.user}:x:{uid}:{uid}:,,,:{self.home}:{shell}\n".lstrip("\n"),
            "group": f"{group}\n{self.user}:x:{uid}:\n".lstrip("\n"),
            "hostname": f"{self.hostname}\n",
            "hosts": f"{hosts}\n127.0.1.1\t{self.hostname}\n".lstrip("\n"),
        }


def _host_file(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


@dataclass(frozen=True)
class View:
    """What one command sees: folders shown where `where` says.
    `layer` is a copy's own folder: the tree is an overlay on a fresh export,
    so no copy sees another's files. `environment` is the installed tree
    whose `keep` folders a test run sees read-only (nothing else of the
    install reaches it)."""

    tree: Path
    home: Path
    reports: Path
    where: Where
    layer: Path | None = None
    environment: Path | None = None
    keep: tuple[str, ...] = ()
    deps: Path | None = None  # a dependency layer, shown read-only at where.layer
    deps_at: str = ""  # the layer's folder of that name, also shown read-only at that place in the tree

    def deps_cache(self) -> Path | None:
        """The layer's cache (layers.py keeps it beside the layer), if it has one."""
        if self.deps is None:
            return None
        cache = self.deps.parent / CACHE
        return cache if cache.is_dir() and not cache.is_symlink() else None

    def specs(self) -> tuple[str, str, str, str, str]:
        tree = str(self.tree)
        if self.layer is not None:
            tree = f"lowerdir={self.tree},upperdir={self.layer}/up,workdir={self.layer}/wk"
        shown = self.keep if self.environment is not None else ()
        return tree, str(self.home), str(self.reports), str(self.environment or ""), "\n".join(shown)


def wrap(command: str, root: Path, view: View, *, uid: int, network: bool) -> list[str]:
    """argv that runs the shell command as uid in fresh namespaces."""
    unshare = [
        "unshare",
        "--mount",
        "--uts",
        "--propagation",
        "private",
        "--pid",
        "--fork",
        "--kill-child",
        "--mount-proc",
    ]
    if not network:
        unshare.append("--net")
    assert "/" not in view.deps_at and view.deps_at not in (".", ".."), "a layer is shown at a top-level name"
    spec = _spec(command, root, view, uid, network)
    return [*unshare, "--", sys.executable, "-I", "-S", PID1, *(f"{key}={value}" for key, value in spec.items())]


def _spec(command: str, root: Path, view: View, uid: int, network: bool) -> dict[str, str]:
    """What pid1.py shows where, and the command it becomes (lists one item a line)."""
    tree, home, reports, environment, keep = view.specs()
    where = view.where
    cache = view.deps_cache()
    return {
        "root": str(root),
        "tree": tree,
        "home": home,
        "reports": reports,
        "uid": str(uid),
        "network": "net" if network else "nonet",
        "command": command,
        "environment": environment,
        "keep": keep,
        "tree_at": where.tree,
        "home_at": where.home,
        "reports_at": where.reports,
        "hostname": where.hostname,
        "deps": str(view.deps or ""),
        "layer_at": where.layer if view.deps is not None else "",
        "cache": str(cache) if cache is not None else "",
        "bytecode": where.scratch_path("bytecode"),
        "mirrored": "\n".join(mirror_points(cache / "root")) if cache is not None else "",
        "supervisor_bin": SUPERVISOR_BIN,
        "deps_at": view.deps_at if view.deps is not None else "",
        "etc": " ".join(ETC_FILES),
        "tmpfs": TMPFS_SIZE,
        "shared": SHARED_SIZE,
        "nproc": str(NPROC_LIMIT),
        "fsize": str(FSIZE_LIMIT),
    }
