"""Pid 1 of a run's new namespaces: shows the run its tree, home, reports
and dependency layer, binds its own /etc files, caps its resources, then
becomes the command's unprivileged shell (confine.py says what is shown
where, and why).

Run as a script by the supervisor's own interpreter (`python -I -S
pid1.py KEY=VALUE...`, as `confine.wrap` writes them), standard library
only, and only its cheapest modules: what it imports is paid by every
command of every run (json and socket would double its start).
It does by system call what a shell script did by starting programs: about
35 of them per command (19 `mount`, 7 `mkdir`...), 17% of a gate's CPU,
where this interpreter's start costs about what three of them did. Any
step that fails ends it before the command starts (the run then fails,
saying which step), as `set -e` did.
"""

from __future__ import annotations

import _socket
import ctypes
import fcntl
import os
import resource
import struct
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV = 1, 2, 4
MS_REMOUNT, MS_BIND, MS_MOVE = 32, 4096, 8192
SEALED = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1

_libc = ctypes.CDLL(None, use_errno=True)


def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    if _libc.mount(
        source.encode(), target.encode(), fstype.encode() if fstype else None, flags, data.encode() if data else None
    ):
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {source} on {target}: {os.strerror(errno)}")


def show(spec: str, target: str) -> None:
    """A folder bound at target, or an overlay when spec is its options."""
    _made(target)
    if spec.startswith("lowerdir="):
        mount("overlay", target, "overlay", 0, spec)
    else:
        mount(spec, target, None, MS_BIND)


def sealed(source: str, target: str) -> None:
    """source bound at target, read-only, no set-uid, no devices."""
    mount(source, target, None, MS_BIND)
    mount("none", target, None, SEALED)


def tmpfs(target: str, options: str, flags: int = 0) -> None:
    mount("tmpfs", target, "tmpfs", flags, options)


def private(target: str, mode: str, size: str) -> None:
    """An empty tmpfs of the command's own over a folder anyone may write."""
    if os.path.isdir(target) and not os.path.islink(target):
        tmpfs(target, f"mode={mode},size={size}", MS_NOSUID | MS_NODEV)


def under_tmp(root: str, path: str) -> str:
    """Where a path the run sees under /tmp is made before the tmpfs moves there."""
    return f"{root}/mnt{path.removeprefix('/tmp')}"


def lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line]


def show_layer(s: dict[str, str], root: str) -> None:
    """The dependency layer, read-only at its place; its folder named
    deps_at also over the tree's (a link or file of head's there goes
    first); the layer's cache in the bytecode folder."""
    sealed(s["deps"], _made(under_tmp(root, s["layer_at"])))
    named = s["deps_at"]
    inner = f"{s['deps']}/{named}"
    if named and os.path.isdir(inner) and not os.path.islink(inner):
        at = f"{under_tmp(root, s['tree_at'])}/{named}"
        if os.path.islink(at) or (os.path.exists(at) and not os.path.isdir(at)):
            os.unlink(at)
        sealed(inner, _made(at))
    cache = s["cache"]
    if cache:
        bytecode = under_tmp(root, s["bytecode"])
        layer = _made(bytecode + s["layer_at"])
        if os.path.isdir(f"{cache}/layer"):
            sealed(f"{cache}/layer", layer)
        for name in lines(s["mirrored"]):
            sealed(f"{cache}/root{name}", _made(bytecode + name))


def _made(path: str) -> str:
    os.makedirs(path, exist_ok=True)
    return path


def lo_up() -> None:
    """`ip link set lo up`: the run's own network holds only loopback."""
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    try:
        request = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(sock.fileno(), SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock.fileno(), SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | IFF_UP))
    finally:
        sock.close()


def confine(s: dict[str, str]) -> None:
    root, home_at = s["root"], s["home_at"]
    tmpfs(f"{root}/mnt", f"mode=1777,size={s['tmpfs']}")
    for name in s["etc"].split():
        if os.path.isfile(f"{root}/{name}") and os.path.isfile(f"/etc/{name}"):
            mount(f"{root}/{name}", f"/etc/{name}", None, MS_BIND)
    show(s["tree"], under_tmp(root, s["tree_at"]))
    show(s["home"], under_tmp(root, home_at) if home_at.startswith("/tmp/") else f"{root}/mnt/.home")
    show(s["reports"], under_tmp(root, s["reports_at"]))
    for name in lines(s["keep"]):
        sealed(f"{s['environment']}/{name}", f"{under_tmp(root, s['tree_at'])}/{name}")
    if s["deps"]:
        show_layer(s, root)
    bytecode = _made(under_tmp(root, s["bytecode"]))
    os.chmod(bytecode, 0o755)
    if s["supervisor_bin"]:
        sealed(s["supervisor_bin"], _made(under_tmp(root, s["supervisor_bin"])))
    with open("/proc/sys/kernel/hostname", "w") as hostname:
        hostname.write(s["hostname"])
    mount(f"{root}/mnt", "/tmp", None, MS_MOVE)
    if not home_at.startswith("/tmp/"):
        tmpfs(os.path.dirname(home_at), "mode=0755,size=1m", MS_NOSUID | MS_NODEV)
        os.mkdir(home_at)
        mount("/tmp/.home", home_at, None, MS_MOVE)
        os.rmdir("/tmp/.home")
    private("/var/tmp", "1777", s["shared"])
    private("/dev/shm", "1777", s["shared"])
    if s["network"] != "net" and os.path.isdir("/run") and not os.path.islink("/run"):
        tmpfs("/run", "mode=0755,size=16m", MS_NOSUID | MS_NODEV)
        os.mkdir("/run/lock")
        os.chmod("/run/lock", 0o1777)
        os.symlink("/dev/shm", "/run/shm")
    else:
        private("/run/lock", "1777", "16m")
    if s["network"] != "net":
        lo_up()
    mount("none", "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY)
    os.chdir(s["tree_at"])


def given_environment() -> dict[str, str]:
    """The environment this process was started with, as the kernel holds
    it: the interpreter's start may add to os.environ (LC_CTYPE, where the
    locale is C), and nothing of this process may reach the command."""
    with open("/proc/self/environ", "rb") as environ:
        pairs = [item.split(b"=", 1) for item in environ.read().split(b"\0") if b"=" in item]
    return {os.fsdecode(key): os.fsdecode(value) for key, value in pairs}


def become(s: dict[str, str], env: dict[str, str]) -> None:
    """The command's own shell, as its uid with no groups and no
    capabilities to hand on, under the run's limits, in the environment
    pid 1 was given."""
    for limit, value in ((resource.RLIMIT_NPROC, int(s["nproc"])), (resource.RLIMIT_FSIZE, int(s["fsize"]))):
        resource.setrlimit(limit, (value, value))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    env.pop("OLDPWD", None)
    if "PWD" in env:
        env["PWD"] = s["tree_at"]  # as a shell's cd into the tree says it
    uid = s["uid"]
    argv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all"]
    os.execvpe("setpriv", [*argv, "--", "/bin/sh", "-c", s["command"]], env)


def main() -> None:
    try:
        env = given_environment()
        spec = dict(arg.split("=", 1) for arg in sys.argv[1:])
        confine(spec)
    except (OSError, KeyError, ValueError) as err:
        sys.stderr.write(f"the run's sandbox could not be set up: {err}\n")
        sys.exit(125)
    become(spec, env)


if __name__ == "__main__":
    main()
