"""The python stack's mutants of changed lines (the `Mutate` of stacks/mutation.py).

The file is head's, so hostile: one that does not parse, is too large, is
not UTF-8, or nests deeper than the parser goes gives no mutants, never an
exception. Each mutant is the original bytes with the pieces of one edit
replaced at the positions ast gives (lines, UTF-8 byte columns), so
everything else, comments and layout included, is kept byte for byte. A
mutant is kept only when its node's new text, parsed alone, is the node
the edit meant (so the positions were read right and the operator token
was found). Each edit keeps
its precedence (see mutant_ops), so the text parses where the old stood;
the tests check that every mutant of generated modules parses whole. (A
reparse of the whole file per mutant would cost seconds on a large change.)

Every mutant holds a whole copy of its file, so a file with thousands of
changed comparisons would hold gigabytes: the mutants kept are bounded in
bytes (MAX_KEPT) and the work in bytes parsed (MAX_CHECKED), taken
round-robin over the lines as `pick` takes them, so a cap under the bound
chooses what it would have chosen from all of them. No change a person
reviews comes near the bounds.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections import defaultdict

from gatetui.pyparse import parse_python
from gatetui.stacks.mutation import OPERATORS, Mutant, round_robin
from gatetui.stacks.python.mutant_ops import Edit, Piece, Position, end_of, start_of
from gatetui.stacks.python.mutant_walk import edits

MAX_CHARS = 256 * 1024  # larger files are generated or vendored: no mutants
MAX_SPAN = 4096  # bytes of one mutated node
MAX_KEPT = 64 * 1024 * 1024  # bytes of mutated sources one file gives
MAX_CHECKED = 4 * 1024 * 1024  # bytes of nodes parsed to check the mutants of one file (a second or two)
GAP = b" \t\f\r\n\\()"  # what stands between two operands besides their operator and comments


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
    checked = 0
    for edit in round_robin({key: sorted(queue, key=rank) for key, queue in per_line.items()}):
        checked += source.size(edit.node)
        if checked > MAX_CHECKED or len(data) * (len(found) + 1) > MAX_KEPT:
            break
        mutant = source.mutant(path, edit)
        if mutant is not None and mutant.source not in found:
            found[mutant.source] = (rank(edit), mutant)
    return [mutant for _, mutant in sorted(found.values(), key=lambda pair: pair[0])]


def rank(edit: Edit) -> tuple[int, int, int]:
    return edit.line, OPERATORS.index(edit.operator), edit.node.col_offset


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

    def offset(self, at: Position) -> int | None:
        line, column = at
        if not 1 <= line < len(self.starts) or not 0 <= column <= self.starts[line] - self.starts[line - 1]:
            return None
        return self.starts[line - 1] + column

    def span(self, node: ast.expr | ast.stmt) -> tuple[int, int] | None:
        begin, end = self.offset(start_of(node)), self.offset(end_of(node))
        return (begin, end) if begin is not None and end is not None and begin <= end else None

    def size(self, node: ast.expr | ast.stmt) -> int:
        where = self.span(node)
        return where[1] - where[0] if where else 0

    def mutant(self, path: str, edit: Edit) -> Mutant | None:
        where = self.span(edit.node)
        placed = self.placed(edit, where) if where and where[1] - where[0] <= MAX_SPAN else None
        if where is None or placed is None:
            return None
        new = self.data
        for first, last, text in reversed(placed):
            new = spliced(new, first, last, text)
        grown = len(new) - len(self.data)
        if new == self.data or not parses_to(new[where[0] : where[1] + grown], edit):
            return None
        line_start, last = self.starts[edit.line - 1], placed[-1][1]
        after = "" if edit.operator == "remove" else lines_at(new, line_start, last + grown)
        return Mutant(path, edit.line, edit.operator, lines_at(self.data, line_start, last), after, new)

    def placed(self, edit: Edit, where: tuple[int, int]) -> list[tuple[int, int, bytes]] | None:
        """The edit's changes in order, when each is found inside the node and none overlaps another."""
        changes = [self.change(piece) for piece in edit.pieces]
        placed = sorted(change for change in changes if change is not None)
        if len(placed) != len(changes) or not placed or placed[0][0] < where[0] or placed[-1][1] > where[1]:
            return None
        return None if any(one[1] > other[0] for one, other in zip(placed, placed[1:])) else placed

    def change(self, piece: Piece) -> tuple[int, int, bytes] | None:
        """The bytes a piece replaces, and with what; for an operator swap,
        the operator's own bytes in the gap (None when it is not there)."""
        first, last = self.offset(piece.start), self.offset(piece.end)
        if first is None or last is None or first > last:
            return None
        if not piece.old:
            return first, last, piece.text.encode()
        token = operator_in(self.data[first:last])
        if token is None or self.data[first + token[0] : first + token[1]].split() != piece.old.encode().split():
            return None
        after = first + token[1]
        while not piece.text and after < last and self.data[after] in b" \t":
            after += 1
        return first + token[0], after, piece.text.encode()


def operator_in(gap: bytes) -> tuple[int, int] | None:
    """Where the operator is in the text between two operands: from its
    first byte to its last that is neither a comment, a parenthesis nor
    a space (`not in` and `is not` are two words)."""
    at: list[int] = []
    comment = False
    for i, byte in enumerate(gap):
        comment = (comment or byte == ord("#")) and byte not in b"\r\n"
        if not comment and byte not in GAP:
            at.append(i)
    return (at[0], at[-1] + 1) if at else None


def parses_to(segment: bytes, edit: Edit) -> bool:
    """Whether the node's new text, parsed alone, is the node the edit meant."""
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
        return same(found, edit.new, 4)
    except RecursionError:
        return False


def same(one: object, other: object, depth: int) -> bool:
    """Whether two trees are alike to `depth` levels (positions aside)."""
    if isinstance(one, ast.AST) and isinstance(other, ast.AST):
        return type(one) is type(other) and (
            depth == 0
            or all(same(getattr(one, name, None), getattr(other, name, None), depth - 1) for name in one._fields)
        )
    if isinstance(one, list) and isinstance(other, list):
        return len(one) == len(other) and all(same(a, b, depth) for a, b in zip(one, other))
    return type(one) is type(other) and one == other


def spliced(data: bytes, first: int, last: int, text: bytes) -> bytes:
    """The data with bytes first..last replaced, a space kept between the
    new text and a name or number it would otherwise run into (`1in x`
    -> `1 not in x`), or between two that the removal would join."""
    left, right = data[first - 1 : first] if first else b"", data[last : last + 1]
    if not text:
        return data[:first] + (b" " if joins(left) and joins(right) else b"") + data[last:]
    before = b" " if joins(left) and joins(text[:1]) else b""
    after = b" " if joins(right) and joins(text[-1:]) else b""
    return data[:first] + before + text + after + data[last:]


def joins(char: bytes) -> bool:
    """A byte that runs into a neighbouring name or number (ASCII letters,
    digits, `_`, any byte of a non-ASCII character)."""
    return bool(char) and (char.isalnum() or char == b"_" or char[0] >= 0x80)


def lines_at(data: bytes, start: int, last: int) -> str:
    """The lines from the one starting at `start` to the one holding byte
    `last - 1`, each stripped, joined by a space: a node's line, or all of
    its lines up to the change (`return (a <` and `b)` read `return (a < b)`)."""
    ends = [at for at in (data.find(b"\n", max(last - 1, start)), data.find(b"\r", max(last - 1, start))) if at >= 0]
    text = data[start : min(ends, default=len(data))].decode("utf-8", "replace")
    return " ".join(part.strip() for part in text.replace("\r", "\n").split("\n") if part.strip())
