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


# The script pid 1 of the new namespaces runs as root, until it becomes the
# command's own shell (exec: pid 1 is then `/bin/sh -c COMMAND`, as in a
# container, and still reaps what the command leaves). $0 the run root,
# $1 and $2 the tree and home to show (a folder, or overlay options), $3 this
# copy's own reports folder, $4 uid, $5 network flag, $6 the command, $7 the
# installed tree whose folders named in $8 (one per line: the environment)
# are shown read-only at their place in the tree (a test run's); $9-$11
# where the tree, home and reports are shown (the tree and reports under
# /tmp, the home under /home, alone there, or /tmp), ${12} the host name,
# also in /etc/hostname and /etc/hosts (the run root's copies, with its
# /etc/passwd and /etc/group, bound over the host's),
# ${13} a dependency layer (the supervisor's, read-only) shown at ${14},
# ${16} is the command's bytecode folder (its pycache prefix): made here,
# root's and read-only to the command, so that no code of the run can plant
# bytecode there for a module imported later (its own modules compile in
# memory); ${15}, the layer's cache, has its `layer` folder shown there
# read-only at the layer's path, and its `root` folder's subtrees named in
# ${17} (one absolute path per line) at those paths. ${19}, when set, names
# the layer's folder that is also shown read-only at that place in the tree
# (npm's node_modules), over whatever the tree holds there: a link or file of
# head's at that name goes first, so nothing is shown through it.
# Every folder anyone may write on a host gets an empty tmpfs of the
# command's own (/var/tmp, /dev/shm, /run/lock; a test run's whole /run):
# what the code under test leaves there (hidden tests copied out, a note for
# the next run) is gone with the command, and the host's files are not shown.
# An install keeps the host's /run, where the resolver's files may live.
# The rest of the host's root file system is read-only to the command (a
# folder anyone may write that this list misses is no way out either).
SCRIPT = r"""
set -e
R="$0"; T="$9"; H="${{10}}"; P="${{11}}"
show() {{
  mkdir -p "$2"
  if [ "${{1#lowerdir=}}" != "$1" ]; then mount -t overlay overlay -o "$1" "$2"
  else mount --bind "$1" "$2"; fi
}}
mount -t tmpfs -o mode=1777,size={tmpfs} tmpfs "$R/mnt"
for f in {etc}; do
  if [ -f "$R/$f" ] && [ -f "/etc/$f" ]; then mount --bind "$R/$f" "/etc/$f"; fi
done
show "$1" "$R/mnt${{T#/tmp}}"
case "$H" in /tmp/*) show "$2" "$R/mnt${{H#/tmp}}";; *) show "$2" "$R/mnt/.home";; esac
show "$3" "$R/mnt${{P#/tmp}}"
printf '%s\n' "$8" | while IFS= read -r name; do
  [ -n "$name" ] || continue
  mount --bind "$7/$name" "$R/mnt${{T#/tmp}}/$name"
  mount -n -o remount,bind,ro,nosuid,nodev "$R/mnt${{T#/tmp}}/$name"
done
if [ -n "${{13}}" ]; then
  mkdir -p "$R/mnt${{14#/tmp}}"
  mount --bind "${{13}}" "$R/mnt${{14#/tmp}}"
  mount -n -o remount,bind,ro,nosuid,nodev "$R/mnt${{14#/tmp}}"
  A="$R/mnt${{T#/tmp}}/${{19}}"
  if [ -n "${{19}}" ] && [ -d "${{13}}/${{19}}" ] && [ ! -L "${{13}}/${{19}}" ]; then
    if [ -L "$A" ] || {{ [ -e "$A" ] && [ ! -d "$A" ]; }}; then rm -f "$A"; fi
    mkdir -p "$A"
    mount --bind "${{13}}/${{19}}" "$A"
    mount -n -o remount,bind,ro,nosuid,nodev "$A"
  fi
  if [ -n "${{15}}" ]; then
    C="$R/mnt${{16#/tmp}}"
    mkdir -p "$C${{14}}"
    if [ -d "${{15}}/layer" ]; then
      mount --bind "${{15}}/layer" "$C${{14}}"
      mount -n -o remount,bind,ro,nosuid,nodev "$C${{14}}"
    fi
    printf '%s\n' "${{17}}" | while IFS= read -r name; do
      [ -n "$name" ] || continue
      mkdir -p "$C$name"
      mount --bind "${{15}}/root$name" "$C$name"
      mount -n -o remount,bind,ro,nosuid,nodev "$C$name"
    done
  fi
fi
mkdir -p "$R/mnt${{16#/tmp}}"
chmod 0755 "$R/mnt${{16#/tmp}}"
if [ -n "${{18}}" ]; then
  mkdir -p "$R/mnt${{18#/tmp}}"
  mount --bind "${{18}}" "$R/mnt${{18#/tmp}}"
  mount -n -o remount,bind,ro,nosuid,nodev "$R/mnt${{18#/tmp}}"
fi
printf '%s' "${{12}}" > /proc/sys/kernel/hostname
mount --move "$R/mnt" /tmp
case "$H" in /tmp/*) ;; *)
  mount -t tmpfs -o mode=0755,nosuid,nodev,size=1m tmpfs "${{H%/*}}"
  mkdir "$H"
  mount --move /tmp/.home "$H"
  rmdir /tmp/.home;;
esac
priv() {{
  if [ -d "$1" ] && [ ! -L "$1" ]; then mount -t tmpfs -o "mode=$2,nosuid,nodev,size=$3" tmpfs "$1"; fi
}}
priv /var/tmp 1777 {shared}
priv /dev/shm 1777 {shared}
if [ "$5" != net ] && [ -d /run ] && [ ! -L /run ]; then
  mount -t tmpfs -o mode=0755,nosuid,nodev,size=16m tmpfs /run
  mkdir -m 1777 /run/lock
  ln -s /dev/shm /run/shm
else
  priv /run/lock 1777 16m
fi
[ "$5" = net ] || ip link set lo up
mount -n -o remount,bind,ro /
cd "$T"
unset OLDPWD
exec prlimit --nproc={nproc} --fsize={fsize} --core=0 -- \
  setpriv --reuid="$4" --regid="$4" --clear-groups --inh-caps=-all -- /bin/sh -c "$6"
"""


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
    script = SCRIPT.format(
        tmpfs=TMPFS_SIZE, shared=SHARED_SIZE, nproc=NPROC_LIMIT, fsize=FSIZE_LIMIT, etc=" ".join(ETC_FILES)
    )
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
    tree, home, reports, environment, keep = view.specs()
    where = view.where
    assert "/" not in view.deps_at and view.deps_at not in (".", ".."), "a layer is shown at a top-level name"
    cache = view.deps_cache()
    return [
        *unshare,
        "--",
        "/bin/sh",
        "-c",
        script,
        str(root),
        tree,
        home,
        reports,
        str(uid),
        "net" if network else "nonet",
        command,
        environment,
        keep,
        where.tree,
        where.home,
        where.reports,
        where.hostname,
        str(view.deps or ""),
        where.layer if view.deps is not None else "",
        str(cache) if cache is not None else "",
        where.scratch_path("bytecode"),
        "\n".join(mirror_points(cache / "root")) if cache is not None else "",
        SUPERVISOR_BIN,
        view.deps_at if view.deps is not None else "",
    ]
