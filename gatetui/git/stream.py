"""A blob's size and bytes without holding the whole blob in memory.

dulwich reads an object whole (a loose object's compressed file, its
inflated bytes, a delta's base and result, joined), so a 200 MB file in
head's tree cost the supervisor 600 MB to 1 GB to export or to size up for
rename detection. Git's object formats are small and stable, so this reads
them by hand, with plain file reads (dulwich maps packs, and touched pages
count against the process too):
- a loose object: one zlib stream after a `blob SIZE\\0` header;
- a whole object in a pack: a type and size header, then one zlib stream;
- a delta in a pack: its base is written to a temporary file (itself read
  this way), then the delta's copy and insert instructions are applied as
  they inflate, copies read from that file.
An object in any other store, or anything this reader does not expect,
falls back to the caller's whole read: never a wrong byte, at worst the
old cost. Every stream's length is checked against its header.
"""

from __future__ import annotations

import os
import tempfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from dulwich.objects import hex_to_filename

CHUNK = 1 << 20  # bytes read, inflated or copied at a time
_BLOB, _OFS_DELTA, _REF_DELTA = 3, 6, 7  # pack type numbers
MAX_CHAIN = 64  # deeper delta chains than git makes are read whole

Whole = Callable[[bytes], bytes]  # the caller's whole read: its own errors for a missing object


@dataclass(frozen=True)
class _Object:
    """Where an object's zlib stream starts, and what it holds."""

    path: str
    offset: int  # of the zlib stream
    size: int  # the blob's size (for a delta: the delta's, until resolved)
    skip: int = 0  # inflated bytes before the content: a loose object's header
    base: _Object | None = None  # a delta's base


def blob_size(store: Any, sha: bytes, whole: Whole) -> int:
    """The size of blob `sha` in bytes, read from its headers where it can be."""
    found = _find(store, sha)
    if found is None:
        return len(whole(sha))
    if found.base is None:
        return found.size
    with _Inflated(found) as delta:
        return _delta_sizes(delta)[1]


def blob_chunks(store: Any, sha: bytes, whole: Whole) -> Iterator[bytes]:
    """Blob `sha`'s bytes, a chunk at a time; a stream whose length differs
    from its header (a damaged object) raises ValueError."""
    found = _find(store, sha)
    if found is None:
        yield whole(sha)
        return
    yield from _content(found)


def _content(found: _Object) -> Iterator[bytes]:
    if found.base is None:
        with _Inflated(found) as whole:
            yield from _checked(whole.chunks(), found.size, found.path)
        return
    with tempfile.TemporaryFile() as base, _Inflated(found) as delta:
        for chunk in _content(found.base):
            base.write(chunk)
        base.flush()  # the copies read it by descriptor
        base_size, size = _delta_sizes(delta)
        if base.tell() != base_size:
            raise ValueError(f"{found.path}: a delta's base holds {base.tell()} bytes, it expects {base_size}")
        yield from _checked(_apply(delta, base.fileno(), base_size), size, found.path)


def _checked(chunks: Iterator[bytes], size: int, path: str) -> Iterator[bytes]:
    seen = 0
    for chunk in chunks:
        seen += len(chunk)
        yield chunk
    if seen != size:
        raise ValueError(f"{path}: an object holds {seen} bytes, its header says {size}")


# --- finding an object -------------------------------------------------------


def _find(store: Any, sha: bytes) -> _Object | None:
    root = getattr(store, "path", None)  # a disk store; any other is read whole
    if not isinstance(root, str | bytes | os.PathLike):
        return None
    try:
        loose = hex_to_filename(os.fsdecode(root), sha.decode("ascii"))
        if os.path.isfile(loose):
            return _loose(loose)
        return _in_packs(store, sha, 0)
    except (OSError, ValueError, zlib.error, AttributeError):
        return None


def _in_packs(store: Any, sha: bytes, depth: int) -> _Object | None:
    for pack in store.packs:
        try:
            offset = pack.index.object_offset(sha)
        except KeyError:
            continue
        return _packed(store, os.path.join(store.pack_dir, os.path.basename(pack.data.filename)), offset, depth)
    return None


def _loose(path: str) -> _Object | None:
    with open(path, "rb") as file:
        head = zlib.decompressobj().decompress(file.read(256), 64)
    kind, _, rest = head.partition(b" ")
    size, nul, _ = rest.partition(b"\0")
    if kind != b"blob" or not nul or not size.isdigit():
        return None
    return _Object(path, 0, int(size), skip=len(kind) + 1 + len(size) + 1)


def _packed(store: Any, path: str, offset: int, depth: int) -> _Object | None:
    if depth > MAX_CHAIN:
        return None
    with open(path, "rb") as file:
        file.seek(offset)
        header = file.read(64)
    kind, size, used = _object_header(header)
    if kind == _BLOB:
        return _Object(path, offset + used, size)
    if kind == _OFS_DELTA:
        back, more = _ofs_base(header[used:])
        base = _packed(store, path, offset - back, depth + 1)
        used += more
    elif kind == _REF_DELTA:
        base = _in_packs(store, header[used : used + 20].hex().encode("ascii"), depth + 1)
        used += 20
    else:
        return None
    return None if base is None else _Object(path, offset + used, size, base=base)


def _object_header(header: bytes) -> tuple[int, int, int]:
    """A pack object's (type, size, header length)."""
    kind, size, used, shift = (header[0] >> 4) & 0x07, header[0] & 0x0F, 1, 4
    while header[used - 1] & 0x80:
        size |= (header[used] & 0x7F) << shift
        shift, used = shift + 7, used + 1
    return kind, size, used


def _ofs_base(raw: bytes) -> tuple[int, int]:
    """An OFS_DELTA's distance back to its base, and the bytes that said it."""
    back, used = raw[0] & 0x7F, 1
    while raw[used - 1] & 0x80:
        back = ((back + 1) << 7) | (raw[used] & 0x7F)
        used += 1
    return back, used


# --- reading a zlib stream ---------------------------------------------------


class _Inflated:
    """An object's inflated bytes, taken in chunks or a few at a time."""

    def __init__(self, found: _Object):
        self.file = open(found.path, "rb")  # noqa: SIM115 - a context manager closes it
        self.file.seek(found.offset)
        self.inflater, self.skip, self.buffer, self.at = zlib.decompressobj(), found.skip, b"", 0

    def __enter__(self) -> _Inflated:
        return self

    def __exit__(self, *_: object) -> None:
        self.file.close()

    def _more(self) -> bytes:
        """The next inflated bytes; b"" at the stream's end."""
        while not self.inflater.eof:
            raw = self.inflater.unconsumed_tail or self.file.read(CHUNK)
            if not raw:
                raise ValueError(f"{self.file.name} ends inside an object")
            out = self.inflater.decompress(raw, CHUNK)
            if self.skip:
                dropped = min(self.skip, len(out))
                out, self.skip = out[dropped:], self.skip - dropped
            if out:
                return out
        return b""

    def chunks(self) -> Iterator[bytes]:
        while chunk := self._more():
            yield chunk

    def take(self, count: int) -> bytes:
        """Exactly `count` bytes (fewer only at the stream's end). A
        position moves through the buffer: delta instructions are taken a
        byte at a time, and slicing off the front each time is quadratic."""
        while len(self.buffer) - self.at < count:
            more = self._more()
            if not more:
                break
            self.buffer, self.at = self.buffer[self.at :] + more, 0
        taken = self.buffer[self.at : self.at + count]
        self.at += len(taken)
        return taken

    def byte(self) -> int:
        taken = self.take(1)
        if not taken:
            raise ValueError(f"{self.file.name}: a delta ends inside an instruction")
        return taken[0]


# --- applying a delta --------------------------------------------------------


def _delta_sizes(delta: _Inflated) -> tuple[int, int]:
    """A delta's base size and result size, from its first bytes."""
    return _varint(delta), _varint(delta)


def _varint(delta: _Inflated) -> int:
    value = shift = 0
    while True:
        byte = delta.byte()
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value


def _apply(delta: _Inflated, base: int, base_size: int) -> Iterator[bytes]:
    """The result of a delta's instructions (after its two sizes): copies
    read from the base file `base`, inserts taken from the delta."""
    while op := delta.take(1):
        code = op[0]
        if code & 0x80:
            start, length = _copy_args(delta, code)
            if start + length > base_size:
                raise ValueError(f"{delta.file.name}: a delta copies past its base's end")
            yield from _pread_all(base, start, length)
        elif code:
            data = delta.take(code)
            if len(data) != code:
                raise ValueError(f"{delta.file.name}: a delta ends inside an insert")
            yield data
        else:
            raise ValueError(f"{delta.file.name}: a delta holds the reserved instruction 0")


def _copy_args(delta: _Inflated, code: int) -> tuple[int, int]:
    """A copy instruction's base offset and length: each byte is present
    only when its bit in `code` is set; a length of 0 means 0x10000."""
    fields = [delta.byte() if code & (1 << bit) else 0 for bit in range(7)]
    start = fields[0] | fields[1] << 8 | fields[2] << 16 | fields[3] << 24
    length = fields[4] | fields[5] << 8 | fields[6] << 16
    return start, length or 0x10000


def _pread_all(fd: int, start: int, length: int) -> Iterator[bytes]:
    while length:
        data = os.pread(fd, min(length, CHUNK), start)
        if not data:
            raise ValueError("a delta's base ended early")
        yield data
        start, length = start + len(data), length - len(data)
