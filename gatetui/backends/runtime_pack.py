"""What goes into a Runtime sandbox, packed here as tar.gz archives.

Head's tree is exported on this machine and sent in whole, so a sandbox
needs no clone host and never sees the repo's history; files the gate
writes over a tree go in the same way. Packing is apart from the backend
and its workspaces because it is plain local work on bytes (a thread's,
no SDK call) that both of them need.
"""

from __future__ import annotations

import asyncio
import io
import shutil
import tarfile
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gatetui.backends.base import TreeExporter
from gatetui.backends.runtime_errors import one_line
from gatetui.errors import BackendError


def pack_tree(export: TreeExporter, drop: tuple[str, ...] = ()) -> bytes:
    """Head's tree, exported here as one tar.gz: no clone host. The `drop`
    names are left out (what git holds where the environment goes)."""
    with tempfile.TemporaryDirectory(prefix="gatetui-export-") as tmp:
        export(Path(tmp) / "tree")
        for name in drop:
            gone = Path(tmp) / "tree" / name
            if gone.is_dir() and not gone.is_symlink():
                shutil.rmtree(gone)
            elif gone.is_symlink() or gone.exists():
                gone.unlink()
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            archive.add(Path(tmp) / "tree", arcname=".")
        return buffer.getvalue()


async def upload_tree(sandbox: Any, export: TreeExporter, remote: str) -> None:
    await sandbox.files.unarchive(remote, await asyncio.to_thread(pack_tree, export), gzip=True)


def pack_files(files: Mapping[str, bytes]) -> bytes:
    """Any number of files in one call into a sandbox, each a plain 0644
    file: never a link, a device or a setuid bit, whatever the caller meant."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for rel, data in files.items():
            info = tarfile.TarInfo(f"./{rel}")
            info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


# Run in the sandbox before files are written over its tree: each folder of
# a path (named with a trailing "/") made a real folder, a link or a file in
# its place removed first (rm never follows the link it removes); each
# file's own place emptied. Written shallow to deep, so no later name goes
# through an earlier link.
CLEAR_THE_WAY = (
    "set -e; for p do case $p in */) d=${p%/}; "
    'if [ -L "$d" ] || { [ -e "$d" ] && [ ! -d "$d" ]; }; then rm -f -- "$d"; fi; '
    '[ -d "$d" ] || mkdir -- "$d";; *) rm -rf -- "$p";; esac; done'
)


async def write_over(sandbox: Any, tree: str, files: Mapping[str, bytes | None]) -> None:
    """Files written over a sandbox's tree as one archive, deletions with
    the clearing before it; a path that leaves the tree is refused. Nothing
    is written through a link head committed or a run planted: the way is
    cleared inside the sandbox first (CLEAR_THE_WAY), as the local backend
    replaces what stands in the way, so both show base's files at their
    paths in real folders. The clearing runs in the sandbox, which is all
    the run's: nothing it could be steered to reaches the supervisor."""
    for rel in files:
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            raise BackendError(f"refusing to write outside the workspace: {rel}")
    done = await sandbox.exec(["sh", "-c", CLEAR_THE_WAY, "sh", *_the_way(files)], cwd=tree, timeout_ms=60_000)
    if done.exit_code != 0:
        raise BackendError(
            f"runtime backend: could not clear the way for the files written over the tree: {one_line(done.stderr)}"
        )
    written = {rel: data for rel, data in files.items() if data is not None}
    if written:
        await sandbox.files.unarchive(tree, pack_files(written), gzip=True)


def _the_way(files: Mapping[str, bytes | None]) -> list[str]:
    """Each written path's folders (with a trailing "/", each once, shallow
    first) and then the path itself."""
    way: list[str] = []
    seen: set[str] = set()
    for rel in sorted(files):
        parts = Path(rel).parts
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth]) + "/"
            if folder not in seen:
                seen.add(folder)
                way.append(folder)
        way.append("/".join(parts))
    return way
