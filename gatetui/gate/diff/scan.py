"""Read a change's test files for removed tests and newly switched-off ones.

Two gate checks answer from the diff alone, in milliseconds, before anything
runs: `tests_kept` (did the change delete more test definitions than it
added?) and `no_new_skips` (did an added line skip a test, expect it to fail,
or focus the run on a few tests?). These are the cheapest ways to turn a red
suite green without fixing anything, so they are worth catching without
executing a line of the code.

The scanner reads whole file contents, not diff hunks: only a lexer that sees
the whole file knows whether `@pytest.mark.skip` sits in code or inside a
docstring, a comment or a template string, and text in strings and comments
never counts. A line diff is still taken, but only to learn which lines of
the new file were added, since a marker that was already there is not new;
nor is one on an added line that base's file held as well (the same
statement in the same test, rewritten by a formatter), where the language
can tell (`TestLanguage.marker_keys`).

This module owns the change as a whole: which files are test files and in
which language, each file's old and new version compared, the line diff,
and the results. The lexing is `codeview`'s; what counts as a test or a
marker is each stack's (`TestLanguage` in stacks/testdefs.py, read by file
extension through the registry); the shared records are in `testdefs`.

Pure: stdlib only, no I/O. Any input, however broken, yields an answer and
never an exception, because the code being judged is often mid-edit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from gatetui.git.changes import FileChange
from gatetui.stacks.codeview import normalize
from gatetui.stacks.lines import added_lines
from gatetui.stacks.registry import language_of, looks_like_test_file
from gatetui.stacks.testdefs import KeyedMarker, MarkerHit, TestDef, TestLanguage

__all__ = ["DiffScan", "Marker", "MarkerHit", "TestDef", "added_lines", "scan_changes", "scanned"]


# --------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Marker:
    """A skip, xfail or focus marker on an added line of a test file."""

    path: str
    line: int  # 1-based, in the new file
    kind: str  # "skip" | "xfail" | "focus"
    text: str  # the stripped source line, shown in the check's detail

    def describe(self) -> str:
        """`path:line kind: text`, one marker in words."""
        return f"{self.path}:{self.line} {self.kind}: {self.text}"


@dataclass(frozen=True)
class DiffScan:
    """What a change did to its test files' definitions and markers."""

    removed: tuple[TestDef, ...]  # in an old file, gone from its new version
    added: tuple[TestDef, ...]  # in a new file, absent from its old version
    markers: tuple[Marker, ...]  # on added lines only
    files_scanned: int = 0  # test files in the change that were read

    def tests_kept_ok(self) -> bool:
        """True unless the change removed more tests than it added.

        Counting rather than matching names lets a renamed test pass: its
        old name is removed and its new one added, a net of zero.
        """
        return len(self.added) >= len(self.removed)

    def tests_kept_detail(self, limit: int = 5) -> str:
        """`2 removed, 0 added: tests/test_x.py::test_a, ...` for the check."""
        head = f"{len(self.removed)} removed, {len(self.added)} added"
        if not self.removed:
            return head
        names = [d.qualified for d in self.removed[:limit]]
        if len(self.removed) > limit:
            names.append(f"and {len(self.removed) - limit} more")
        return f"{head}: {', '.join(names)}"

    def skips_detail(self, limit: int = 5) -> str:
        """The new markers, each as `path:line kind: text`, for the check."""
        if not self.markers:
            return "no new skip, xfail or focus markers"
        count = len(self.markers)
        parts = [m.describe() for m in self.markers[:limit]]
        if count > limit:
            parts.append(f"and {count - limit} more")
        noun = "marker" if count == 1 else "markers"
        return f"{count} new {noun}: " + "; ".join(parts)

    def summary(self) -> str:
        """Both checks' details on one line, for logs and the plain CLI."""
        return f"{self.tests_kept_detail()}; {self.skips_detail()}"


# --------------------------------------------------------------------------
# Reading a version
# --------------------------------------------------------------------------


def _decode(data: bytes) -> str:
    """File bytes as text, undecodable bytes replaced, newlines normalized."""
    return normalize(data.decode("utf-8", errors="replace"))


# --------------------------------------------------------------------------
# The change as a whole
# --------------------------------------------------------------------------


class _FileScan(NamedTuple):
    """One file version's test definitions and markers."""

    defs: list[TestDef]
    markers: list[MarkerHit]


class _Side(NamedTuple):
    """One version of a changed file: path, language (None: not read) and
    text (None: absent)."""

    path: str
    language: TestLanguage | None
    text: str | None


def _side(path: str, data: bytes | None, present: bool) -> _Side:
    """One version of a file, read when it exists in that commit."""
    text = _decode(data) if present and data is not None else None
    return _Side(path, language_of(path), text)


def _sides(change: FileChange) -> tuple[_Side, _Side]:
    """The old and new versions of a change; an absent one has no text."""
    old_path = change.old_path or change.new_path or ""
    new_path = change.new_path or change.old_path or ""
    return (
        _side(old_path, change.old_data, change.kind != "add"),
        _side(new_path, change.new_data, change.kind != "delete"),
    )


def _unmatched(mine: Sequence[TestDef], theirs: Sequence[TestDef]) -> list[TestDef]:
    """Definitions in `mine` beyond the count of same-named ones in `theirs`.

    A multiset difference keyed by name: a file defining `test_a` twice
    whose new version defines it once has lost one.
    """
    budget = Counter(d.name for d in theirs)
    out: list[TestDef] = []
    for d in mine:
        if budget[d.name] > 0:
            budget[d.name] -= 1
        else:
            out.append(d)
    return out


def scanned(paths: Sequence[str], is_test_file: Callable[[str], bool] = looks_like_test_file) -> bool:
    """Whether `scan_changes` reads a change with these paths: only those
    need their contents read from git."""
    return any(language_of(p) is not None for p in paths) and any(map(is_test_file, paths))


def scan_changes(changes: Iterable[FileChange], is_test_file: Callable[[str], bool] = looks_like_test_file) -> DiffScan:
    """Removed and added test definitions, and markers on added lines.

    Only files in a language a stack reads whose old or new path `is_test_file`
    accepts are read. Each file is compared with its own previous version (a
    rename keeps its pair), so a renamed file with the same tests removes
    nothing; a test moved between two unrelated files counts as one removed
    and one added. Deleted files bring no markers; added files bring all.
    """
    removed: list[TestDef] = []
    added: list[TestDef] = []
    markers: list[Marker] = []
    files = 0
    for change in changes:
        if not scanned([p for p in (change.old_path, change.new_path) if p], is_test_file):
            continue
        files += 1
        old, new = _sides(change)
        if old.text == new.text and old.language == new.language:
            continue  # a pure rename: nothing to compare
        before, after = _scan_side(old, markers=False), _scan_side(new, markers=True)
        removed.extend(_unmatched(before.defs, after.defs))
        added.extend(_unmatched(after.defs, before.defs))
        markers.extend(_new_markers(after.markers, old, new))
    return DiffScan(tuple(removed), tuple(added), tuple(markers), files)


def _scan_side(side: _Side, *, markers: bool) -> _FileScan:
    """A file version's findings; none when absent or in no known language."""
    if side.language is None or side.text is None:
        return _FileScan([], [])
    return _FileScan(*side.language.scan(side.path, side.text, markers))


def _new_markers(hits: Sequence[MarkerHit], old: _Side, new: _Side) -> list[Marker]:
    """The markers that sit on lines the change added and that base's
    version of the file did not already hold (`_beyond_base`).

    The line diff runs only when the new version has a marker at all, so
    the usual file, with none, costs no diff.
    """
    if not hits or new.text is None:
        return []
    if old.text is not None:
        fresh = added_lines(old.text, new.text)
        hits = _beyond_base([h for h in hits if h[0] in fresh], old, new)
    return [Marker(new.path, line, kind, text) for line, kind, text in hits]


def _beyond_base(hits: list[MarkerHit], old: _Side, new: _Side) -> list[MarkerHit]:
    """Of the markers on added lines, those head's file holds more of than
    base's: a line a formatter rewrote (three `raise SkipTest(` joined with
    their arguments onto one line each) adds a line, not a skip.

    The language keys every marker of both versions (kind, enclosing test,
    normalized statement; `TestLanguage.marker_keys`), and the change's
    surplus of each key, counted once per statement, goes to the statements
    on added lines in file order. Without keys (a language that has none, a
    version that does not parse) every marker on an added line is new.
    """
    keys = new.language.marker_keys if new.language is not None and old.language == new.language else None
    after = keys(new.text) if keys is not None and hits and new.text is not None else None
    before = keys(old.text) if keys is not None and after is not None and old.text is not None else None
    if after is None or before is None:
        return hits
    statements = _statements(after)
    surplus = Counter(key for _, key in statements) - Counter(key for _, key in _statements(before))
    spots = {(h[0], h[1]) for h in hits}
    fresh: set[tuple[int, str]] = set()
    for (_, key), marks in sorted(statements.items()):
        if surplus[key] > 0 and not spots.isdisjoint(marks):
            surplus[key] -= 1
            fresh.update(marks)
    keyed = {(m.line, m.kind) for m in after}
    return [h for h in hits if (h[0], h[1]) in fresh or (h[0], h[1]) not in keyed]


def _statements(keyed: Sequence[KeyedMarker]) -> dict[tuple[tuple[int, int], str], set[tuple[int, str]]]:
    """Each statement holding a marker, with its key: the (line, kind) of
    its markers. Two markers of one statement (a parametrize's two xfail
    cases) are one, whether a formatter put them on one line or two."""
    out: dict[tuple[tuple[int, int], str], set[tuple[int, str]]] = {}
    for mark in keyed:
        out.setdefault((mark.statement, mark.key), set()).add((mark.line, mark.kind))
    return out
