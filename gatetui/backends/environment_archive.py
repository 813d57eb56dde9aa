"""The environment an install left, rewritten by the gate before it reaches a fresh machine.

On a backend whose install runs on a machine the test runs cannot share (a
Runtime sandbox: whatever the install left there, processes included, would
come along in a fork), the environment leaves that machine as an archive and
the runs get it unpacked into fresh ones. The archive was made where head's
code ran, so it is read as hostile and written anew, holding only:
regular files, folders and symbolic links under the kept folders, by
normalised relative names, each once. A member whose path leads through a
link, climbs out, or is of another kind (device, fifo) is left out; a hard
link becomes a copy of the file it names; setuid, setgid and sticky bits and
owners are dropped. What the links point at is the environment check's to
judge, where the runs will see it.

Written by hand because tarfile's extraction filters judge where a link
points (a venv's interpreter links point outside the tree by design) and
extract; this needs a rewrite that lets nothing be written through a link,
whoever unpacks it.
"""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass
from pathlib import PurePosixPath

MODE_BITS = 0o777  # no setuid, setgid or sticky bit survives


@dataclass(frozen=True)
class Rewritten:
    archive: bytes  # a tar.gz whose members are named `<kept folder>/...`
    left_out: tuple[str, ...]  # members not carried, each with why


class _Rewrite:
    def __init__(self, keep: tuple[str, ...] | None, out: tarfile.TarFile):
        self.keep, self.out = (None if keep is None else set(keep)), out
        self.seen: dict[str, tarfile.TarInfo] = {}
        self.files: dict[str, bytes] = {}
        self.left_out: list[str] = []

    def take(self, member: tarfile.TarInfo, source: tarfile.TarFile) -> None:
        name = _normal(member.name)
        if name is None and member.isdir() and member.name.rstrip("/") in (".", ""):
            return  # the archive's own top (`tar -C tree .`): nothing to carry
        why = self._refusal(name, member)
        if why or name is None:  # a None name always has a refusal: the second test narrows the type
            self.left_out.append(f"{member.name!r}: {why}")
            return
        info = tarfile.TarInfo(name)
        info.mode, info.mtime = member.mode & MODE_BITS, member.mtime
        data = b""
        if member.isdir():
            info.type = tarfile.DIRTYPE
        elif member.issym():
            info.type, info.linkname = tarfile.SYMTYPE, member.linkname
        else:
            data = self._content(member, source)
            info.size = len(data)
            self.files[name] = data
        self.seen[name] = info
        self.out.addfile(info, io.BytesIO(data) if info.isfile() else None)

    def _refusal(self, name: str | None, member: tarfile.TarInfo) -> str:
        if name is None:
            return "not a plain relative name"
        if self.keep is not None and name.split("/")[0] not in self.keep:
            return "outside the kept folders"
        if name in self.seen:
            return "named twice"
        if self.keep is not None and name in self.keep and not member.isdir():
            return "a kept folder that is no folder"
        parent = name.rpartition("/")[0]
        if parent and (parent not in self.seen or not self.seen[parent].isdir()):
            return "its folder is a link or not in the archive"
        if member.islnk():
            target = _normal(member.linkname)
            return "" if target in self.files else "a hard link to no file carried"
        if not (member.isreg() or member.isdir() or member.issym()):
            return "not a file, folder or link"
        return ""

    def _content(self, member: tarfile.TarInfo, source: tarfile.TarFile) -> bytes:
        if member.islnk():
            return self.files[_normal(member.linkname) or ""]
        handle = source.extractfile(member)
        return handle.read() if handle is not None else b""


def rewrite(raw: bytes, keep: tuple[str, ...] | None) -> Rewritten:
    """The members of `raw` (a tar, compressed or not) worth carrying, as a
    fresh tar.gz; raises tarfile.TarError when `raw` is no archive at all.
    `keep` None: a whole tree, files at its top included (an install's
    tree moved to a machine started from a dependency layer)."""
    buffer = io.BytesIO()
    with (
        tarfile.open(fileobj=io.BytesIO(raw), mode="r:*") as source,
        tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as out,
    ):
        rewriting = _Rewrite(keep, out)
        for member in source:
            rewriting.take(member, source)
    return Rewritten(buffer.getvalue(), tuple(rewriting.left_out))


def _normal(name: str) -> str | None:
    """`./a/b/` as `a/b`; None for an absolute name, `..`, or a name that
    holds a NUL or nothing at all."""
    if not name or "\0" in name or name.startswith("/"):
        return None
    parts = [part for part in PurePosixPath(name).parts if part != "."]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)
