"""Path globs as the gate's settings write them (`tests/**`, `**/test_*.py`).

A leaf: the profiles (which test files a stack has) and the sealing rules
(which files old_tests puts back) match paths the same way. Written by hand
because fnmatch's `*` crosses folders and pathlib's `match` anchors at the
right; here `**/` is any folders, `**` anything, `*` one name's part, and a
plain path also matches everything under it. Paths are matched whole,
newlines included (DOTALL), so no name slips past by holding one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    if not re.search(r"[*?\[]", pattern):
        return re.compile(re.escape(pattern.rstrip("/")) + r"(/.*)?\Z", re.DOTALL)
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z", re.DOTALL)


@lru_cache(maxsize=64)
def _globs_regex(globs: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{glob_regex(g).pattern})" for g in globs) or r"(?!)", re.DOTALL)


def matches(path: str, globs: Iterable[str]) -> bool:
    return _globs_regex(tuple(globs)).match(path) is not None


def under_any(path: str, folders: tuple[str, ...]) -> bool:
    """Whether `path` is one of `folders` or lies under one (`.` is no folder here)."""
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders if f != ".")
