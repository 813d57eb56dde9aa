"""A folder's entries as data (a link as its target), to compare a tree before
and after something wrote into it."""

from __future__ import annotations

import os
from pathlib import Path


def listing(folder: Path) -> dict[str, bytes]:
    """Every entry below `folder` (links as their targets), to compare before and after."""
    seen: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        seen[rel] = (
            os.readlink(path).encode() if path.is_symlink() else (path.read_bytes() if path.is_file() else b"<folder>")
        )
    return seen
