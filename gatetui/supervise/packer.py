"""A submitted commit's objects, read with the rights of the user who submitted it.

A root supervisor that read an agent's working copy with its own rights would
follow whatever the agent planted there: an alternates file naming another
user's repository, a loose object that is a symlink to a file only root can
read. The commit would then be gated with content the agent could never see,
and its tests could print it. So the objects are read by a child process
running as the submitting uid (`python -m gatetui.supervise.packer`), which can open
only what that user can. Its output is untrusted (the agent may tamper with a
process of its own uid): the supervisor bounds it, and every object's id is
computed from its bytes as it is added to the mirror.

The child starts as root and becomes the submitter only after it has loaded
every module it will need: the agent's uid must not need to reach gatetui's
install or the interpreter's (a supervisor installed in root's 0700 home is
common), and nothing is read from the agent's repository before the switch.

The stream: one record per object, `TYPE SIZE\\n` then SIZE bytes of the
object's raw content; `end\\n` closes it. Base's commits the agent's repo also
has go in on stdin, one id per line, so only what base lacks is sent.
"""

from __future__ import annotations

import importlib
import os
import pwd
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, cast

from dulwich.object_store import BaseObjectStore, MissingObjectFinder
from dulwich.objects import ObjectID, ShaFile
from dulwich.repo import Repo

from gatetui.errors import BadInput

END = b"end\n"
OBJECT_TYPES = frozenset({1, 2, 3, 4})  # commit, tree, blob, tag
MAX_BYTES = 4 << 30  # a working copy's new objects beyond this are not a change to judge
MAX_HEADER = 32
BATCH = 2000  # objects per pack written into the mirror
SECONDS = 600
# What reading a repository imports on first use (dulwich loads these lazily);
# loaded before the child gives up root, since the submitter may reach none.
PRELOAD = (
    "bisect",
    "bz2",
    "lzma",
    "random",
    "shutil",
    "tempfile",
    "encodings.idna",
    "dulwich.bitmap",
    "dulwich.commit_graph",
    "dulwich.config",
    "dulwich.trailers",
    "dulwich.worktree",
    "dulwich.pack",
    "dulwich.file",
    "dulwich.refs",
    "dulwich.errors",
)


def write_objects(source: Path, sha: str, haves: Iterable[str], out: BinaryIO) -> int:
    """Write what commit `sha` needs beyond `haves` from the repo at `source`."""
    count = 0
    with Repo(str(source)) as repo:
        store = repo.object_store
        known = [ObjectID(h.encode()) for h in haves if ObjectID(h.encode()) in store]
        for object_id, _ in MissingObjectFinder(store, haves=known, wants=[ObjectID(sha.encode())]):
            obj = store[object_id]
            raw = obj.as_raw_string()
            out.write(b"%d %d\n" % (obj.type_num, len(raw)))
            out.write(raw)
            count += 1
    out.write(END)
    out.flush()
    return count


def read_objects(stream: BinaryIO, limit: int = MAX_BYTES) -> Iterator[ShaFile]:
    """The objects of a packer's stream, each id computed from its bytes;
    BadInput on anything malformed, truncated or over `limit` bytes."""
    total = 0
    while True:
        header = stream.readline(MAX_HEADER)
        if header == END:
            return
        type_num, size = _header(header)
        total += size
        if total > limit:
            raise BadInput(f"the working copy's new objects pass {limit >> 20} MiB: too big to judge")
        raw = stream.read(size)
        if len(raw) != size:
            raise BadInput("the working copy's objects ended midway")
        try:
            yield ShaFile.from_raw_string(type_num, raw)
        except Exception as err:  # noqa: BLE001 - dulwich raises several kinds on a corrupt object
            raise BadInput(f"the working copy holds a corrupt object: {err}") from None


def _header(line: bytes) -> tuple[int, int]:
    words = line.split()
    if not line.endswith(b"\n") or len(words) != 2 or not all(w.isdigit() for w in words):
        raise BadInput("the working copy's objects could not be read (a malformed record)")
    type_num, size = int(words[0]), int(words[1])
    if type_num not in OBJECT_TYPES:
        raise BadInput(f"the working copy's objects could not be read (object type {type_num})")
    return type_num, size


def packer_argv(uid: int, source: Path, sha: str) -> list[str]:
    """The packer, to become `uid` (its own group, no other groups) once
    loaded, with an isolated interpreter: no PYTHONPATH or user site of anyone's."""
    try:
        gid = pwd.getpwuid(uid).pw_gid
    except KeyError:
        gid = uid
    return [sys.executable, "-I", "-m", "gatetui.supervise.packer", f"--as={uid}:{gid}", str(source), sha]


def become(uid: int, gid: int) -> None:
    """Give up root for good: no groups, real, effective and saved ids all
    `uid`/`gid` (the kernel then drops every capability and makes the process
    undumpable, so the agent cannot trace it either). Raises if any is kept."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid) or os.getgroups():
        raise PermissionError(f"could not become uid {uid}")


def preload() -> None:
    """Import now what reading a repository would import later."""
    for name in PRELOAD:
        importlib.import_module(name)


def fetch_as(uid: int, source: Path, sha: str, haves: list[str], store: BaseObjectStore) -> int:
    """Add commit `sha`'s objects, read as `uid`, to the object `store`;
    returns how many were added. BadInput when that user cannot read them."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8"}
    with subprocess.Popen(
        packer_argv(uid, source, sha),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd="/",
        env=env,
    ) as proc:
        timer = threading.Timer(SECONDS, proc.kill)  # a stalled reader must not hold the mirror's lock
        timer.start()
        try:
            return _collect(proc, haves, store)
        finally:
            timer.cancel()


def _collect(proc: subprocess.Popen[bytes], haves: list[str], store: BaseObjectStore) -> int:
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write("".join(f"{h}\n" for h in haves).encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass
    try:
        added = _add_all(read_objects(cast(BinaryIO, proc.stdout)), store)
    except BadInput as err:
        proc.kill()
        code = proc.wait()
        raise (_failure(code, proc.stderr.read()) if code > 0 else err) from None  # its own words first
    if proc.wait() != 0:
        raise _failure(proc.returncode, proc.stderr.read())
    return added


def _add_all(objects: Iterator[ShaFile], store: BaseObjectStore) -> int:
    added, batch = 0, []
    for obj in objects:
        batch.append((obj, None))
        if len(batch) >= BATCH:
            store.add_objects(batch)
            added, batch = added + len(batch), []
    if batch:
        store.add_objects(batch)
    return added + len(batch)


def _failure(code: int | None, stderr: bytes) -> BadInput:
    lines = stderr.decode(errors="replace").strip().splitlines()
    said = lines[-1] if lines else f"the reader ended with code {code}"
    return BadInput(f"cannot read the commit from the working copy as its owner: {said}")


def _identity(argv: list[str]) -> tuple[tuple[int, int] | None, list[str]]:
    """`--as=UID:GID` if first, and the rest."""
    if argv and argv[0].startswith("--as="):
        uid, _, gid = argv[0].removeprefix("--as=").partition(":")
        if uid.isdigit() and gid.isdigit():
            return (int(uid), int(gid)), argv[1:]
        raise ValueError(argv[0])
    return None, argv


def main(argv: list[str]) -> int:
    """`python -m gatetui.supervise.packer [--as=UID:GID] SOURCE SHA`, haves on stdin."""
    try:
        identity, argv = _identity(argv)
    except ValueError:
        identity, argv = None, []
    if len(argv) != 2:
        print(
            "usage: python -m gatetui.supervise.packer [--as=UID:GID] SOURCE SHA (base's commit ids on stdin)",
            file=sys.stderr,
        )
        return 2
    haves = sys.stdin.read().split()
    if identity is not None:
        try:
            preload()
            become(*identity)
        except Exception as err:  # noqa: BLE001 - one line for the supervisor
            print(f"the reader could not take the submitting user's rights: {err}", file=sys.stderr)
            return 1
    try:
        write_objects(Path(argv[0]), argv[1], haves, sys.stdout.buffer)
    except KeyError as err:
        oid = err.args[0].decode() if err.args and isinstance(err.args[0], bytes) else str(err)
        print(f"object {oid} is missing or unreadable", file=sys.stderr)
        return 1
    except PermissionError as err:
        print(f"{err.filename} is not readable by the submitting user", file=sys.stderr)
        return 1
    except Exception as err:  # noqa: BLE001 - one line for the supervisor, never a traceback
        print(f"{type(err).__name__}: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
