"""The python stack's mutants of changed lines (the `Mutate` of stacks/mutation.py).

The file is head's, so hostile: one that does not parse, is too large, is
not UTF-8, or nests deeper than the parser goes gives no mutants, never an
exception. Each mutant is the original bytes with one node's exact span
(ast's line and UTF-8 byte columns) replaced, so comments and layout
elsewhere are kept byte for byte. A mutant is made only when two checks
hold, each on the small text alone (a reparse of the whole file per mutant
would cost seconds on a large change): the span holds exactly the node
(its text parses back to the same tree, so the offsets were read right),
and the replacement parses on its own as one line. An operator only swaps
within a precedence level, or puts an expression where any may stand (see
mutant_ops), so the replacement parses where the node stood; the tests
check that every mutant of generated modules parses whole.

Every mutant holds a whole copy of its file, so a file with thousands of
changed comparisons would hold gigabytes: the mutants kept are bounded in
bytes (MAX_KEPT) and in tries (MAX_TRIES), taken round-robin over the lines
as `pick` takes them, so a cap under the bound chooses what it would have
chosen from all of them. No change a person reviews comes near the bounds.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections import defaultdict

from gatetui.pyparse import parse_python
from gatetui.stacks.mutation import OPERATORS, Mutant, round_robin
from gatetui.stacks.python.mutant_ops import Edit
from gatetui.stacks.python.mutant_walk import edits

MAX_CHARS = 256 * 1024  # larger files are generated or vendored: no mutants
MAX_SPAN = 4096  # bytes of one replaced node: past it, a mutant is no one-line diff a person reads
MAX_KEPT = 64 * 1024 * 1024  # bytes of mutated sources one file gives
MAX_TRIES = 5000  # edits tried for one file


def mutate(path: str, text: str, lines: frozenset[int]) -> list[Mutant]:
    """Every mutant of the changed `lines` of one file, in line order (and,
    on a line, in OPERATORS order, then left to right); the same source is
    never given twice."""
    if not lines or len(text) > MAX_CHARS:
        return []
    data = utf8(text)
    tree = parse_python(text) if data is not None else None
    if data is None or tree is None:
        return []
    source = Source(data)
    per_line: dict[tuple[str, int], list[Edit]] = defaultdict(list)
    for edit in edits(tree, lines):
        per_line[path, edit.line].append(edit)
    found: dict[bytes, tuple[tuple[int, int, int], Mutant]] = {}
    for tries, edit in enumerate(round_robin({key: sorted(queue, key=rank) for key, queue in per_line.items()})):
        if tries >= MAX_TRIES or len(data) * (len(found) + 1) > MAX_KEPT:
            break
        mutant = source.mutant(path, edit)
        if mutant is not None and mutant.source not in found:
            found[mutant.source] = (rank(edit), mutant)
    return [mutant for _, mutant in sorted(found.values(), key=lambda pair: pair[0])]


def rank(edit: Edit) -> tuple[int, int, int]:
    return edit.line, OPERATORS.index(edit.operator), edit.start[1]


def utf8(text: str) -> bytes | None:
    """The text as the UTF-8 bytes ast counts columns in; None when it
    cannot be (a lone surrogate) or declares another encoding for text
    that is not ASCII (its mutants would be read back differently)."""
    try:
        data = text.encode("utf-8")
        declared, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except (UnicodeError, SyntaxError):
        return None
    return data if data.isascii() or declared in ("utf-8", "utf-8-sig") else None


class Source:
    """One file's bytes, and where each line starts, split where ast splits."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.starts = [0]
        for line in data.splitlines(keepends=True):  # bytes split on \n, \r\n and \r only, as ast does
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line: int, column: int) -> int | None:
        if not 1 <= line < len(self.starts) or not 0 <= column <= self.starts[line] - self.starts[line - 1]:
            return None
        return self.starts[line - 1] + column

    def mutant(self, path: str, edit: Edit) -> Mutant | None:
        begin, end = self.offset(*edit.start), self.offset(*edit.end)
        if begin is None or end is None or not 0 <= end - begin <= MAX_SPAN:
            return None
        replacement = rendered(edit) if holds(self.data[begin:end], edit) else None
        if replacement is None:
            return None
        new = spliced(self.data, begin, end, replacement.encode("utf-8"))
        if new == self.data:
            return None
        start = self.starts[edit.line - 1]
        return Mutant(path, edit.line, edit.operator, line_at(self.data, start),
                      "" if edit.operator == "remove" else line_at(new, start), new)


def holds(segment: bytes, edit: Edit) -> bool:
    """Whether the span's text is the node: it parses back to the same tree."""
    try:
        text = segment.decode("utf-8")
    except UnicodeError:
        return False
    tree = parse_python(text if edit.statement else f"({text})")
    if tree is None or len(tree.body) != 1:
        return False
    found: ast.AST = tree.body[0]
    if not edit.statement and isinstance(found, ast.Expr):
        found = found.value
    try:
        return ast.dump(found) == ast.dump(edit.node)
    except RecursionError:
        return False


def rendered(edit: Edit) -> str | None:
    """The replacement's text, when it is one line that parses on its own."""
    try:
        text = edit.new if isinstance(edit.new, str) else ast.unparse(edit.new)
    except (RecursionError, ValueError):
        return None
    if "\n" in text or "\r" in text:
        return None
    return text if parse_python(text if edit.statement else f"({text})") is not None else None


def spliced(data: bytes, begin: int, end: int, replacement: bytes) -> bytes:
    """The data with the span replaced, a space kept between the replacement
    and a name it would otherwise run into (`if(a)<b:` -> `if a<=b:`)."""
    before = b" " if begin and joins(data[begin - 1:begin]) and joins(replacement[:1]) else b""
    after = b" " if joins(data[end:end + 1]) and joins(replacement[-1:]) else b""
    return data[:begin] + before + replacement + after + data[end:]


def joins(char: bytes) -> bool:
    """A byte that runs into a neighbouring name or number (ASCII letters,
    digits, `_`, any byte of a non-ASCII character)."""
    return bool(char) and (char.isalnum() or char == b"_" or char[0] >= 0x80)


def line_at(data: bytes, start: int) -> str:
    """The line starting at `start`, stripped."""
    ends = [at for at in (data.find(b"\n", start), data.find(b"\r", start)) if at >= 0]
    return data[start:min(ends, default=len(data))].decode("utf-8", "replace").strip()
