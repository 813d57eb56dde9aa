"""A dependency layer's files on disk: taken out of the workspace that built
it, made the supervisor's and read-only, and named by a manifest of every
entry (its kind, mode and sha256), which is compared again at every use.

Nothing here follows a link: the tree was written by a sandbox (third-party
installers ran there), so each entry is read for what it is, never for
where it points.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
from collections.abc import Mapping
from pathlib import Path

from gatetui.errors import BackendError


def manifest(root: Path) -> dict[str, str]:
    """Every entry under root by relative path: `dir`, `link:TARGET`, or
    `file:MODE:SHA256`; anything else is `other` (and never matches a
    layer that was verified)."""
    out: dict[str, str] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted([*dirs, *files]):
            path = os.path.join(folder, name)
            out[os.path.relpath(path, root)] = _entry(path)
    return out


def _entry(path: str) -> str:
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        return f"link:{os.readlink(path)}"
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    if not stat.S_ISREG(info.st_mode):
        return "other"
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return f"file:{stat.S_IMODE(info.st_mode):o}:{digest.hexdigest()}"


def digest_of(entries: dict[str, str]) -> str:
    """The layer's digest: sha256 over its manifest's canonical JSON."""
    return hashlib.sha256(json.dumps(entries, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def differing(kept: dict[str, str], now: dict[str, str]) -> list[str]:
    """Paths whose entry differs (changed, added or gone)."""
    return sorted(p for p in kept.keys() | now.keys() if kept.get(p) != now.get(p))


def write_plain(dest: Path, files: Mapping[str, bytes]) -> None:
    """A layer's build workspace: a fresh folder holding `files` (plain
    files at plain relative paths, as the lock files of a tree are) and
    nothing else."""
    dest.mkdir()
    for rel, data in files.items():
        parts = rel.split("/")
        if not rel or rel.startswith("/") or any(part in ("", ".", "..") for part in parts):
            raise BackendError(f"a layer's file has no plain relative path: {rel!r}")
        target = dest.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def take_out(source: Path, dest: Path) -> None:
    """Move the built folder into the store (a copy across file systems);
    a link where the folder should be is refused."""
    try:
        info = os.lstat(source)
    except FileNotFoundError:
        raise BackendError(f"the layer's build left no {source.name} folder") from None
    if not stat.S_ISDIR(info.st_mode):
        raise BackendError(f"the layer's build left {source.name} as something other than a folder")
    try:
        os.rename(source, dest)
        return
    except OSError:
        pass
    done = subprocess.run(["cp", "-a", "--reflink=auto", str(source), str(dest)], capture_output=True)
    if done.returncode != 0:
        shutil.rmtree(dest, ignore_errors=True)
        raise BackendError(f"could not keep the dependency layer: {done.stderr.decode().strip()}")


def seal_tree(root: Path) -> None:
    """The supervisor's, and nobody's to write: folders 0755, files 0444
    (0555 where executable), no set-id bit; links are left as they are
    (the verification judges them)."""
    uid, gid = os.geteuid(), os.getegid()
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in (*dirs, *files):
            path = os.path.join(folder, name)
            os.lchown(path, uid, gid)
            info = os.lstat(path)
            if stat.S_ISDIR(info.st_mode):
                os.chmod(path, 0o755)
            elif stat.S_ISREG(info.st_mode):
                os.chmod(path, 0o555 if info.st_mode & 0o111 else 0o444)
    os.lchown(root, uid, gid)
    os.chmod(root, 0o755)


def size_of(root: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(root, followlinks=False):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                continue
    return total


def remove_tree(root: Path) -> None:
    """A layer's folder gone, read-only entries and all (its folders are
    made writable first, for a supervisor that is not root)."""
    for folder, dirs, _files in os.walk(root, followlinks=False):
        for name in dirs:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, 0o700)
    if root.is_dir() and not root.is_symlink():
        os.chmod(root, 0o700)
    shutil.rmtree(root, ignore_errors=True)


def mirror_points(folder: Path) -> list[str]:
    """Where a cache's `root` mirror is shown: each of its subtrees at the
    first folder that holds more than one folder (the standard library's,
    not all of /usr), never inside /tmp (the run's own), and no name with a
    line break (the script reads one per line)."""
    points: list[str] = []

    def walk(folder: Path, shown: str) -> None:
        try:
            kids = sorted(os.listdir(folder))
        except OSError:
            return
        alone = len(kids) == 1 and (folder / kids[0]).is_dir() and not (folder / kids[0]).is_symlink()
        if shown and not alone:
            if shown != "/tmp" and not shown.startswith("/tmp/") and "\n" not in shown:
                points.append(shown)
            return
        for kid in kids:
            if (folder / kid).is_dir() and not (folder / kid).is_symlink():
                walk(folder / kid, f"{shown}/{kid}")

    walk(folder, "")
    return points
