"""Links head committed where the gate writes base's files over its tree.

Base's sealed files (and the hidden tests) are put back at their paths in
the run's tree. If head committed a link where a folder of such a path is
(`tests -> /somewhere`, `tests/unit -> ../../..`), the backend writes
nothing through it: it puts a real folder there (backends/local_files.py),
so base's tests run where base had them. Which of those links is worth a
finding is decided here, from git alone, before any sandbox starts.

A link that stays inside the tree (`tests -> spec`) can be an honest move,
and base's tests then judge it like any other change: no finding. A link
that leads out of the tree (an absolute target, or `..` past its top) is
not: in any other clone it points at nothing or at that machine's files,
and its only use here is to steer where the gate writes base's tests. It
fails `old_tests` the way a runner hook does: a bent judge, not a changed
test.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping

from gatetui.stacks.base import Finding

HOPS = 40  # links followed through one another, as the kernel's limit
SHOWN = 80  # characters of a link's target said in a finding


def links_out(
    written: Iterable[str], is_file: Callable[[str], bool], target_of: Callable[[str], bytes | None]
) -> tuple[Finding, ...]:
    """One finding per link out of the tree on the way to a written path.
    `is_file`: whether head's tree has a file entry (blob or link) at a
    path; `target_of`: a symlink's committed target, None for a blob."""
    links: dict[str, str] = {}
    found: dict[str, Finding] = {}
    for path in sorted(written):
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder in found or not is_file(folder):
                continue
            target = target_of(folder)
            if target is None:
                break  # a plain file in the way: replaced, and nothing to follow
            links[folder] = target.decode("utf-8", "replace")
            if _leaves(folder, links, target_of, is_file):
                found[folder] = _finding(folder, links[folder], path)
            break
    return tuple(found.values())


def _leaves(
    link: str,
    links: dict[str, str],
    target_of: Callable[[str], bytes | None],
    is_file: Callable[[str], bool],
    hops: int = HOPS,
) -> bool:
    """Whether `link`, followed through head's other links, ends outside
    the tree (read lexically: the tree is git's, not a disk's)."""
    target = links[link]
    if target.startswith("/"):
        return True
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(link), target))
    if joined == ".." or joined.startswith("../"):
        return True
    if hops == 0 or joined == ".":
        return False  # the top, or links round in a loop: still the tree's
    parts = joined.split("/")
    for depth in range(1, len(parts) + 1):
        step = "/".join(parts[:depth])
        if not is_file(step):
            continue
        found = target_of(step)
        if found is None:
            return False
        links.setdefault(step, found.decode("utf-8", "replace"))
        return _leaves(step, links, target_of, is_file, hops - 1)
    return False


def _finding(link: str, target: str, path: str) -> Finding:
    shown = target if len(target) <= SHOWN else f"{target[:SHOWN]}…"
    return Finding(
        link,
        f"head committed {link} as a link out of the tree (-> {shown}) where base's {path} "
        "lies: nothing was written through it, base's files went into a real folder there",
    )


def written_paths(old_tests: Mapping[str, bytes | None], hidden: Mapping[str, bytes] | None) -> list[str]:
    """Every path the gate writes over head's tree in some run."""
    return sorted({*old_tests, *(hidden or {})})
