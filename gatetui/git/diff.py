"""What changed between two trees, and the `git diff -M` text that shows it.

Renames are detected at git's default threshold, copies count as adds and
submodules are skipped; every changed path is checked for unsafe names
before it is handed out.  The text follows `git diff -M base head`: paths
quoted as core.quotePath does, mode, rename and index lines, 3 lines of
context, git's default hunk-header context, and binary files noted, not shown.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from dulwich.diff_tree import RenameDetector, TreeChange, tree_changes
from dulwich.object_store import BaseObjectStore
from dulwich.objects import ObjectID

from gatetui.git.errors import RepoError, missing
from gatetui.git.refs import ABBREV
from gatetui.git.stream import blob_size
from gatetui.git.tree import blob_data, check_tree_path, is_gitlink

try:  # private in dulwich, but stable for a decade; only used for the header
    from dulwich.diff_tree import _similarity_score
except ImportError:  # pragma: no cover - depends on the dulwich version
    _similarity_score = None  # type: ignore[assignment]

# Renames are detected at >= 50% similarity, as `git diff -M` does.  dulwich
# keeps a pair when `score > threshold`, hence 49.
_RENAME_THRESHOLD = 49
# git: a blob is binary when a NUL appears in its first 8000 bytes.
_BINARY_PROBE = 8000
_CONTEXT = 3
_DIFF_LIMIT_LINES = 5000
RENAME_MAX_BYTES = (
    8 << 20
)  # bigger blobs are not compared for renames  # above this, difflib may use its "autojunk" heuristic


@dataclass(frozen=True)
class Entry:
    """One side of a changed file: its tree path, mode and blob sha."""

    path: bytes
    mode: int
    sha: bytes


class _SizedRenameDetector(RenameDetector):
    """dulwich's rename detection, blind to blobs over RENAME_MAX_BYTES.

    Content renames are found by counting blocks of both blobs, each read
    whole: one 200 MB file took 14 s and 600 MB. A big file is still paired
    when moved unchanged (exact renames compare ids, not bytes); edited and
    moved, it reads as a delete and an add."""

    def _find_content_rename_candidates(self) -> None:
        adds, deletes = self._adds, self._deletes
        self._adds = [c for c in adds if c.new is None or self._small(c.new.mode, c.new.sha)]
        self._deletes = [c for c in deletes if c.old is None or self._small(c.old.mode, c.old.sha)]
        try:
            super()._find_content_rename_candidates()
        finally:
            self._adds, self._deletes = adds, deletes

    def _small(self, mode: int | None, sha: bytes | None) -> bool:
        if sha is None or mode is None or is_gitlink(mode):  # dulwich's own rules for these
            return True
        return blob_size(self._store, sha, lambda s: self._store[ObjectID(s)].as_raw_string()) <= RENAME_MAX_BYTES


# A change as (kind, old, new); kind is "add", "delete", "modify" or "rename".
Change = tuple[str, "Entry | None", "Entry | None"]


def raw_changes(
    store: BaseObjectStore, trees: tuple[bytes, bytes], revs: tuple[str, str], repo_path: Path
) -> list[Change]:
    """The changes from tree `trees[0]` to `trees[1]` (of commits `revs`), by path.

    A type change (file <-> symlink) is a delete and an add of one path, the
    delete first; every path is checked for unsafe names.
    """
    old_tree, new_tree = trees
    base, head = revs
    if old_tree == new_tree:
        return []
    detector = _SizedRenameDetector(store, rename_threshold=_RENAME_THRESHOLD)
    out: list[Change] = []
    try:
        for change in tree_changes(store, _id(old_tree), _id(new_tree), rename_detector=detector):
            found = _classify(change)
            if found is None:
                continue
            _kind, old, new = found
            for e in (old, new):
                if e is not None:
                    check_tree_path(e.path, base if e is old else head, repo_path)
            out.append(found)
    except KeyError as exc:
        raise RepoError(
            f"cannot diff {base!r}..{head!r} in {repo_path}: object "
            f"{missing(exc)} is missing (the repository may be shallow "
            "or damaged; check it with `git fsck`)"
        ) from None
    out.sort(key=_change_order)
    return out


def merge_type_changes(raw: list[Change]) -> list[Change]:
    """`raw` with each delete and add of one path (a file <-> symlink type
    change, next to each other after `raw_changes`) made one "modify"."""
    out: list[Change] = []
    i = 0
    while i < len(raw):
        kind, old, new = raw[i]
        nxt = raw[i + 1] if i + 1 < len(raw) else None
        if (
            kind == "delete"
            and nxt is not None
            and nxt[0] == "add"
            and old is not None
            and nxt[2] is not None
            and nxt[2].path == old.path
        ):
            kind, new = "modify", nxt[2]
            i += 1
        out.append((kind, old, new))
        i += 1
    return out


def _classify(change: TreeChange) -> Change | None:
    """dulwich's change as ours; None when nothing we show changed."""
    old = _entry(change.old)
    new = _entry(change.new)
    kind = change.type
    if kind == "copy":  # the source still exists: an add for us
        kind, old = "add", None
    if kind == "unchanged" or (old is None and new is None):
        return None
    if old is None:
        kind = "add"
    elif new is None:
        kind = "delete"
    elif kind not in ("modify", "rename"):
        kind = "modify"
    return kind, old, new


def _entry(e: object) -> Entry | None:
    if e is None:
        return None
    path, mode, sha = e.path, e.mode, e.sha  # type: ignore[attr-defined]
    if path is None or mode is None or sha is None or is_gitlink(mode):
        return None
    return Entry(bytes(path), int(mode), bytes(sha))


def _change_order(change: Change) -> tuple[bytes, int]:
    kind, old, new = change
    entry = new or old
    assert entry is not None
    # a type change (file <-> symlink) is a delete and an add of one path:
    # the delete first, as git prints it.
    return entry.path, 0 if kind == "delete" else 1


# ------------------------------------------------------------- diff text


def file_diff(store: BaseObjectStore, kind: str, old: Entry | None, new: Entry | None, repo_path: Path) -> bytes:
    """One file's part of `git diff -M`: its header, then hunks or a binary note."""
    a_path = (old or new).path  # type: ignore[union-attr]
    b_path = (new or old).path  # type: ignore[union-attr]
    header = _header(store, kind, old, new)
    if (old.sha if old else None) == (new.sha if new else None):
        return header
    a_data = blob_data(store, old.sha, repo_path) if old else b""
    b_data = blob_data(store, new.sha, repo_path) if new else b""
    a_label = _quote(b"a/", a_path) if old else b"/dev/null"
    b_label = _quote(b"b/", b_path) if new else b"/dev/null"
    if b"\0" in a_data[:_BINARY_PROBE] or b"\0" in b_data[:_BINARY_PROBE]:
        return header + b"Binary files " + a_label + b" and " + b_label + b" differ\n"
    hunks = list(_hunks(a_data, b_data))
    if not hunks:
        return header
    a_tab = b"\t" if old and b" " in a_path else b""
    b_tab = b"\t" if new and b" " in b_path else b""
    return header + b"--- " + a_label + a_tab + b"\n" + b"+++ " + b_label + b_tab + b"\n" + b"".join(hunks)


def _header(store: BaseObjectStore, kind: str, old: Entry | None, new: Entry | None) -> bytes:
    """The "diff --git" line and the extended header lines below it."""
    a_path = (old or new).path  # type: ignore[union-attr]
    b_path = (new or old).path  # type: ignore[union-attr]
    out = [b"diff --git " + _quote(b"a/", a_path) + b" " + _quote(b"b/", b_path)]
    if old is None and new is not None:
        out.append(b"new file mode %06o" % new.mode)
    elif new is None and old is not None:
        out.append(b"deleted file mode %06o" % old.mode)
    else:
        assert old is not None and new is not None
        if old.mode != new.mode:
            out.append(b"old mode %06o" % old.mode)
            out.append(b"new mode %06o" % new.mode)
        if kind == "rename":
            out.append(b"similarity index %d%%" % _similarity(store, old, new))
            out.append(b"rename from " + _quote(b"", old.path))
            out.append(b"rename to " + _quote(b"", new.path))
    zero = b"0" * ABBREV
    old_sha = old.sha if old else None
    new_sha = new.sha if new else None
    if old_sha != new_sha:
        line = b"index " + (old_sha[:ABBREV] if old_sha else zero) + b".." + (new_sha[:ABBREV] if new_sha else zero)
        if old is not None and new is not None and old.mode == new.mode:
            line += b" %06o" % new.mode
        out.append(line)
    return b"\n".join(out) + b"\n"


def _similarity(store: BaseObjectStore, old: Entry, new: Entry) -> int:
    if old.sha == new.sha:
        return 100
    a, b = store[ObjectID(old.sha)], store[ObjectID(new.sha)]
    if _similarity_score is not None:
        return int(_similarity_score(a, b))
    ratio = difflib.SequenceMatcher(None, a.as_raw_string(), b.as_raw_string())
    return int(ratio.quick_ratio() * 100)  # pragma: no cover


_QUOTE_MAP = {
    0x07: b"\\a",
    0x08: b"\\b",
    0x09: b"\\t",
    0x0A: b"\\n",
    0x0B: b"\\v",
    0x0C: b"\\f",
    0x0D: b"\\r",
    0x22: b'\\"',
    0x5C: b"\\\\",
}


def _quote(prefix: bytes, path: bytes) -> bytes:
    """git's quoting of a path in diff headers (core.quotePath=true)."""
    if not any(b < 0x20 or b in (0x22, 0x5C) or b >= 0x7F for b in path):
        return prefix + path
    out = bytearray(b'"' + prefix)
    for b in path:
        if b in _QUOTE_MAP:
            out += _QUOTE_MAP[b]
        elif b < 0x20 or b >= 0x7F:
            out += b"\\%03o" % b
        else:
            out.append(b)
    out += b'"'
    return bytes(out)


def _lines(data: bytes) -> list[bytes]:
    """Split on "\\n" only (as git does), keeping the line ends."""
    if not data:
        return []
    lines = data.split(b"\n")
    out = [line + b"\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def _range(start: int, stop: int) -> bytes:
    length = stop - start
    if length == 1:
        return b"%d" % (start + 1)
    if length == 0:
        return b"%d,0" % start
    return b"%d,%d" % (start + 1, length)


def _funcname(lines: list[bytes], before: int) -> bytes:
    """git's default hunk-header context: the nearest line above the hunk
    that starts with a letter, '_' or '$' (first 80 bytes, right-stripped)."""
    for k in range(before - 1, -1, -1):
        line = lines[k]
        if line[:1].isalpha() or line[:1] in (b"_", b"$"):
            return line[:80].rstrip()
    return b""


def _emit(sign: bytes, line: bytes) -> bytes:
    if line.endswith(b"\n"):
        return sign + line
    return sign + line + b"\n\\ No newline at end of file\n"


def _hunks(a_data: bytes, b_data: bytes) -> Iterator[bytes]:
    a, b = _lines(a_data), _lines(b_data)
    autojunk = len(a) + len(b) > _DIFF_LIMIT_LINES
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=autojunk)
    for group in matcher.get_grouped_opcodes(_CONTEXT):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        head = b"@@ -" + _range(i1, i2) + b" +" + _range(j1, j2) + b" @@"
        func = _funcname(a, i1)
        parts = [head + (b" " + func if func else b"") + b"\n"]
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                parts.extend(_emit(b" ", line) for line in a[x1:x2])
                continue
            parts.extend(_emit(b"-", line) for line in a[x1:x2])
            parts.extend(_emit(b"+", line) for line in b[y1:y2])
        yield b"".join(parts)


def _id(sha: bytes | None) -> ObjectID | None:
    return None if sha is None else ObjectID(sha)
