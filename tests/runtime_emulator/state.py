"""The emulator's sandboxes and processes, and the faults a test asks for.

A sandbox is a host directory `<root>/sbx/<id>` holding `workspace/` (its
home, the default cwd) and `tmp/`. Its commands see that directory at the
emulator's one fixed path `<root>/box`, bind-mounted there inside a mount
namespace of their own, so every sandbox, a fork included, sees its files at
the same absolute path, as Runtime's /workspace is the same in every VM.
With `internet: true` it also holds `egress.sock`, its egress proxy's
socket (egress.py), the commands' only way out.
"""

from __future__ import annotations

import codecs
import configparser
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from tests.runtime_emulator.egress import FORWARDER, PORT, PROXY_ENV, SOCKET_NAME, EgressProxy

# Runs inside namespaces of its own, as a command inside a VM would: its own
# processes (`/proc` shows no host process; every one dies with the command),
# its own network with loopback alone (the host's loopback services are never
# reachable), and with `internet: true` the sandbox's egress proxy as its only
# way out (egress.py: a forwarder on the command's own 127.0.0.1:PORT to the
# proxy's unix socket, which lets through the allow list's hosts only), and
# empty host temp dirs and homes
# (what the attack samples look for) but for the tools on PATH found there
# (a pyenv python), bound back read-only. Each mount source is relative to a
# cwd taken before the tmpfs hid its path. Not a security boundary: the rest
# of the host's files stay visible; it runs this project's own samples only.
HIDDEN = ("/var/tmp", "/root", "/home", "/run")  # and /tmp, last: the sandbox's directory is there
IMAGE_PYTHON = str(Path(sys.base_prefix) / "bin" / "python3")  # first on the commands' PATH (Box.env)


def _namespace_script(internet: bool) -> str:
    """Positional parameters: $0 the sandbox's directory, $1 the fixed path
    it is shown at, $2 the cwd, $3 the command, $4 the python running $5,
    the forwarder (internet only: it listens before the command starts)."""
    steps = ["ip link set lo up"]
    for hidden in HIDDEN:
        kept = sorted(
            {
                Path(entry).relative_to(hidden).parts[0]
                for entry in os.environ.get("PATH", "").split(":")
                if entry.startswith(hidden + "/") and Path(entry).is_dir()
            }
        )
        steps += [f"cd {hidden}", f"mount -t tmpfs vm-tmpfs {hidden}"]
        steps += [
            f"mkdir {hidden}/{name} && mount --no-canonicalize --bind -o ro {name} {hidden}/{name}" for name in kept
        ]
    steps += [
        'cd "$0"',
        "mount -t tmpfs vm-tmpfs /tmp",
        'mkdir -p "$1"',
        'mount --no-canonicalize --bind . "$1"',
        'cd "$2"',
    ]
    if internet:
        steps.append(f'"$4" -I -S -c "$5" "$1/{SOCKET_NAME}" {PORT}')
    return " && ".join([*steps, 'exec bash -c "$3"'])


def _unshare(internet: bool) -> list[str]:
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--pid",
        "--fork",
        "--mount-proc",
        "--net",
        "--",
        "/bin/sh",
        "-c",
        _namespace_script(internet),
    ]


UNSHARE = {internet: _unshare(internet) for internet in (True, False)}
IMAGE_ENV_PREFIXES = ("PIP_", "npm_config_", "NPM_CONFIG_")  # the "image's" package settings
DEFAULT_MEMORY_MIB = 1024


def _image_pip_settings() -> dict[str, str]:
    """The host user's pip.conf [global] as PIP_* variables: the "image"
    installs from the same local indexes (its HOME is the sandbox's, and no
    host but those of its allow list is reachable from it)."""
    parser = configparser.ConfigParser()
    parser.read(Path.home() / ".config" / "pip" / "pip.conf")
    return {
        f"PIP_{key.upper().replace('-', '_')}": " ".join(value.split())
        for key, value in (parser["global"].items() if parser.has_section("global") else ())
    }


IMAGE_PIP = _image_pip_settings()
READ_BYTES = 1 << 16
RETAIN_BYTES = 8 << 20  # output kept per command for late readers


class Chunk(NamedTuple):
    kind: str  # stdout or stderr
    offset: int  # bytes of both streams before this chunk
    text: str
    size: int  # its length in UTF-8 bytes


@dataclass
class Faults:
    """What the next requests get instead of a normal answer; each count is
    used up one request at a time."""

    no_capacity: int = 0  # creates refused with 429 no_capacity
    capacity_retry_ms: int = 100
    unavailable: int = 0  # requests (matching `unavailable_on`) answered 503
    unavailable_on: str = ""  # a substring of "METHOD path", "" for any
    unavailable_code: str = "host_unavailable"
    rate_limited: int = 0  # requests answered 429 rate_limited
    rate_retry_ms: int = 200
    cut_streams: int = 0  # streamed execs cut (no end) after the first output
    lose_streams: int = 0  # streamed execs that end without exit, and whose follows stay empty
    never_running: int = 0  # creates whose sandbox stays "starting"
    capturing_snapshots: int = 0  # snapshots first answered "capturing", a running source left paused
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def take(self, name: str) -> bool:
        """Use up one of a fault's count; False when none is left."""
        with self.lock:
            left = getattr(self, name)
            if left <= 0:
                return False
            setattr(self, name, left - 1)
            return True


class Proc:
    """One command: its output as chunks with shared offsets, of which the
    last RETAIN_BYTES are kept (as Runtime keeps a bounded buffer: a reader
    that falls further behind gets a `truncated` event and skips ahead)."""

    def __init__(self, box: Box, argv: list[str], env: dict[str, str], timeout_ms: int | None):
        self.id = f"proc_{uuid.uuid4().hex[:10]}"
        self.box = box
        self.chunks: list[Chunk] = []  # chunk i is number `self.first + i` of the command
        self.first = 0
        self.size = 0  # bytes of stdout and stderr together
        self.exit: dict[str, Any] | None = None
        self.lost = False  # the lose_streams fault: follows never see the end
        self.cond = threading.Condition()
        self.started = time.monotonic()
        self.popen = subprocess.Popen(
            argv,
            env=env,
            cwd=str(box.dir),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        readers = [
            threading.Thread(target=self._read, args=(pipe, kind), daemon=True)
            for pipe, kind in ((self.popen.stdout, "stdout"), (self.popen.stderr, "stderr"))
        ]
        for reader in readers:
            reader.start()
        threading.Thread(target=self._wait, args=(readers, timeout_ms), daemon=True).start()

    def _read(self, pipe: Any, kind: str) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while chunk := pipe.read1(READ_BYTES):
            self._append(kind, decoder.decode(chunk))
        self._append(kind, decoder.decode(b"", final=True))
        pipe.close()

    def _append(self, kind: str, text: str) -> None:
        if not text:
            return
        data = text.encode()
        with self.cond:
            self.chunks.append(Chunk(kind, self.size, text, len(data)))
            self.size += len(data)
            kept = self.size - self.chunks[0].offset
            dropped = 0
            while kept > RETAIN_BYTES and dropped < len(self.chunks) - 1:
                kept -= self.chunks[dropped].size
                dropped += 1
            if dropped > len(self.chunks) // 2:  # trim in bulk: appends stay cheap
                del self.chunks[:dropped]
                self.first += dropped
            self.cond.notify_all()

    def since(self, index: int) -> tuple[int, list[Chunk], dict[str, Any] | None]:
        """The chunks from number `index` on (from the oldest kept, if that
        one is gone), the number after them, and the exit if it came."""
        with self.cond:
            start = max(index, self.first)
            new = self.chunks[start - self.first :]
            return start + len(new), new, self.exit

    def wait_for_more(self, index: int, seconds: float) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.first + len(self.chunks) > index or self.exit is not None, seconds)

    def _wait(self, readers: list[threading.Thread], timeout_ms: int | None) -> None:
        timed_out = False
        try:
            code = self.popen.wait(None if timeout_ms is None else timeout_ms / 1000)
        except subprocess.TimeoutExpired:
            timed_out = True
            self.kill()
            code = self.popen.wait()
        self.kill()  # whatever it left in the background goes with it
        for reader in readers:
            reader.join(5)
        with self.cond:
            self.exit = {
                "type": "exit",
                "exitCode": None if timed_out or code < 0 else code,
                "timedOut": timed_out,
                "durationMs": int((time.monotonic() - self.started) * 1000),
                "state": "exited",
            }
            self.cond.notify_all()

    def kill(self, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, sig)

    def wait_exit(self) -> dict[str, Any]:
        with self.cond:
            self.cond.wait_for(lambda: self.exit is not None)
            assert self.exit is not None
            return self.exit

    def output(self) -> tuple[str, str]:
        with self.cond:
            out = "".join(c.text for c in self.chunks if c.kind == "stdout")
            err = "".join(c.text for c in self.chunks if c.kind == "stderr")
        return out, err


class Box:
    """One sandbox: its record, its directory and its processes."""

    def __init__(self, root: Path, fixed: Path, labels: dict[str, str], request: dict[str, Any]):
        self.id = f"sbx_{uuid.uuid4().hex[:12]}"
        self.dir = root / "sbx" / self.id
        self.fixed = fixed
        self.labels = dict(labels)
        self.request = request  # the create (or fork) body, as sent
        self.state = "starting"
        self.created = time.time()
        self.procs: dict[str, Proc] = {}
        self.lock = threading.Lock()
        self.timer: threading.Timer | None = None
        self.stuck = False  # the never_running fault
        self.egress: EgressProxy | None = None  # started by the first command, with internet only

    @property
    def internet(self) -> bool:
        """The create's `network.internet` (no `network`: on, with nothing allowed)."""
        return bool((self.request.get("network") or {}).get("internet", True))

    @property
    def allow(self) -> list[str]:
        return list((self.request.get("network") or {}).get("allow") or [])

    @property
    def home(self) -> str:
        return str(self.fixed / "workspace")

    def info(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "state": self.state,
            "labels": self.labels,
            "memoryMiB": self.request.get("memoryMiB", DEFAULT_MEMORY_MIB),
            "vcpu": self.request.get("vcpu", 2),
            "network": self.request.get("network"),
            "timeoutSeconds": self.request.get("timeoutSeconds"),
            "endsAt": None,
            "snapshotId": self.request.get("snapshot"),
            "createdAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.created)),
        }

    def make_dirs(self) -> None:
        for sub in ("workspace", "tmp"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)

    def host_path(self, path: str) -> Path:
        """A path as the sandbox's commands see it, on the host; refuses
        anything outside the sandbox."""
        target = Path(path) if path.startswith("/") else Path(self.home) / path
        try:
            rel = Path(os.path.normpath(target)).relative_to(self.fixed)
        except ValueError:
            raise PermissionError(f"{path} is outside the sandbox") from None
        return self.dir / rel

    def env(self, extra: dict[str, str] | None) -> dict[str, str]:
        """The image's environment: nothing of the host's but PATH, locale
        and the package index settings; never a Runtime key."""
        env = {**IMAGE_PIP, **{k: v for k, v in os.environ.items() if k.startswith(IMAGE_ENV_PREFIXES)}}
        path = f"{Path(sys.base_prefix) / 'bin'}:{os.environ.get('PATH', os.defpath)}"  # no pyenv shim
        env.update(
            PATH=path, LANG="C.UTF-8", HOME=self.home, TMPDIR=str(self.fixed / "tmp"), PIP_RETRIES="0"
        )  # a host off the allow list fails at once (403), not after backoff
        if self.internet:
            env.update(PROXY_ENV)  # as an image with an egress proxy: pip and npm honour them
        env.update(extra or {})
        return env

    def start(self, body: dict[str, Any], delay: float = 0.0) -> Proc:
        command = body.get("command")
        if command is None:
            import shlex

            command = shlex.join(body.get("argv") or ["true"])
        cwd = body.get("cwd") or self.home
        argv = [*UNSHARE[self.internet], str(self.dir), str(self.fixed), cwd, command]
        if self.internet:
            self._start_egress()
            argv += [IMAGE_PYTHON, FORWARDER]
        if delay > 0:  # the command waits first, inside its process group: a kill ends the wait too
            argv = ["/bin/sh", "-c", f'sleep {delay:.3f} && exec "$@"', "sh", *argv]
        proc = Proc(self, argv, self.env(body.get("env")), body.get("timeoutMs"))
        with self.lock:
            self.procs[proc.id] = proc
        return proc

    def _start_egress(self) -> None:
        """The sandbox's proxy, once: at its first command, so that a fork
        (a copy of the directory, the socket file a dead copy) gets its own."""
        with self.lock:
            if self.egress is None and self.state != "deleted":
                self.egress = EgressProxy(self.dir / SOCKET_NAME, self.allow)

    def pause(self) -> None:
        """Its commands stand still (SIGSTOP) as a paused VM's do: a
        snapshot then copies a disk that nothing writes to."""
        self._signal_all("paused", signal.SIGSTOP)

    def wake(self) -> None:
        self._signal_all("running", signal.SIGCONT)

    def _signal_all(self, state: str, sig: int) -> None:
        with self.lock:
            if self.state == "deleted":
                return
            self.state = state
            procs = [proc for proc in self.procs.values() if proc.exit is None]
        for proc in procs:
            proc.kill(sig)

    def end(self) -> None:
        """Kill every process, stop the proxy, remove the directory: a delete."""
        if self.timer is not None:
            self.timer.cancel()
        with self.lock:
            procs = list(self.procs.values())
            self.state = "deleted"
            egress, self.egress = self.egress, None
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait_exit()
        if egress is not None:
            egress.close()
        shutil.rmtree(self.dir, ignore_errors=True)
