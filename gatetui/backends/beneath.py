"""Opening a path below a folder handle, never through a link, never out.

The supervisor (root locally) writes files into trees that the code under
test shaped: a link that head committed, or that a test planted between two
commands, where a folder of the path should be would otherwise carry a
root-owned write anywhere on the host. Every such open starts from a handle
of the tree's top folder and resolves each component without following any
symbolic link and without leaving that folder.

Linux says exactly that in one call, openat2(2) with RESOLVE_BENEATH and
RESOLVE_NO_SYMLINKS. Python has no wrapper for it (the os module stops at
openat through `dir_fd`), so it is called here by hand, through ctypes and
its syscall number, with its `struct open_how`. Where the kernel has no
openat2 (before 5.6, or a seccomp filter that answers ENOSYS), the same
rule is kept by a walk: each folder opened with O_NOFOLLOW | O_DIRECTORY
relative to the one before, the last component with O_NOFOLLOW.

Either way a link on the path is an OSError with errno ELOOP (openat2, or
the last component) or ENOTDIR (a folder component opened with O_NOFOLLOW),
and a way out of the folder is EXDEV: `in_the_way` tells those apart from a
missing file.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
from functools import cache
from typing import Any

RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
NO_LINKS = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
# openat2 came late enough to have one number on every architecture that
# uses the generic table; others take the walk.
OPENAT2 = {"x86_64": 437, "aarch64": 437, "arm64": 437, "riscv64": 437, "ppc64le": 437, "s390x": 437}
IN_THE_WAY = frozenset({errno.ELOOP, errno.ENOTDIR, errno.EXDEV})
DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


@cache
def _syscall() -> tuple[Any, int] | None:
    number = OPENAT2.get(platform.machine())
    if number is None:
        return None
    call = ctypes.CDLL(None, use_errno=True).syscall
    call.restype = ctypes.c_long
    return call, number


def openat2(dirfd: int, path: str, flags: int, mode: int = 0, resolve: int = NO_LINKS) -> int:
    """The raw call: a new descriptor, or OSError with the kernel's errno
    (ENOSYS where the kernel or a filter refuses the call itself)."""
    found = _syscall()
    if found is None:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS), path)
    call, number = found
    how = _OpenHow(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, resolve)
    encoded = os.fsencode(path)
    fd = call(
        number, ctypes.c_int(dirfd), ctypes.c_char_p(encoded), ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how))
    )
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), path)
    return int(fd)


@cache
def has_openat2() -> bool:
    """Whether this kernel answers openat2 (asked once, on the root folder)."""
    try:
        os.close(openat2(-100, "/", DIRECTORY, resolve=0))  # -100: AT_FDCWD
    except OSError as err:
        if err.errno in (errno.ENOSYS, errno.EPERM):
            return False
        raise
    return True


def open_beneath(dirfd: int, rel: str, flags: int, mode: int = 0o644) -> int:
    """`rel` opened below the folder `dirfd`, no link followed on the way or
    at its end, no `..` out of it."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise OSError(errno.EXDEV, "not a plain path below the folder", rel)
    if has_openat2():
        return openat2(dirfd, rel, flags, mode)
    return _walk(dirfd, parts, flags, mode)


def _walk(dirfd: int, parts: list[str], flags: int, mode: int) -> int:
    """The same open without openat2: one component at a time."""
    here = dirfd
    try:
        for part in parts[:-1]:
            below = os.open(part, DIRECTORY | os.O_NOFOLLOW, dir_fd=here)
            if here != dirfd:
                os.close(here)
            here = below
        return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=here)
    finally:
        if here != dirfd:
            os.close(here)


def open_folder(path: str) -> int:
    """A handle of a folder the gate made (a tree's top), itself no link."""
    return os.open(path, DIRECTORY | os.O_NOFOLLOW)


def in_the_way(err: OSError) -> bool:
    """A link or a non-folder stood on the path (or it led out)."""
    return err.errno in IN_THE_WAY
