"""The environment's fingerprint, as a gate script wrote it from inside a
sandbox, and what changed between two of them.

The file is read as hostile input (it sits in a folder the sandbox's uid
can write): its size and entry count are capped, and anything that is not
a JSON object of string paths to string digests reads as no fingerprint,
which fails the install rather than passing it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

MAX_BYTES = 256 * 1024 * 1024
MAX_ENTRIES = 2_000_000
SHOWN = 5  # paths named in a failure's one line; the rest are counted


@dataclass(frozen=True)
class Change:
    path: str
    how: str  # "added", "removed", "changed"

    def __str__(self) -> str:
        return f"{self.path} {self.how}"


def read_fingerprint(raw: bytes | None) -> dict[str, str] | None:
    """{path: digest}, or None when the file is missing or not one."""
    if raw is None or len(raw) > MAX_BYTES:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict) or len(files) > MAX_ENTRIES:
        return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        return None
    return dict(files)


def changes(before: Mapping[str, str], after: Mapping[str, str]) -> list[Change]:
    """Every path whose entry differs, in path order."""
    out = []
    for path in sorted(before.keys() | after.keys()):
        if path not in after:
            out.append(Change(path, "removed"))
        elif path not in before:
            out.append(Change(path, "added"))
        elif before[path] != after[path]:
            out.append(Change(path, "changed"))
    return out


def describe(found: list[Change], label: str) -> str:
    """One line an agent can act on: what changed, and why it may not."""
    shown = ", ".join(str(change) for change in found[:SHOWN])
    more = f" (and {len(found) - SHOWN} more)" if len(found) > SHOWN else ""
    return (
        f"{label} changed the environment the test runs execute: {shown}{more}; "
        "an install script may build the project but not rewrite its dependencies"
    )
