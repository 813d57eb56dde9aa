"""Which of a Python file's markers are the same marker in another version.

`no_new_skips` flags a marker on a line the change added, but a formatter
adds lines too: idna 3.9 joined three `raise unittest.SkipTest(` statements
and their wrapped arguments onto one line each, and each joined line held a
skip that base had already. So a marker on an added line is new only when
head's file holds more markers like it than base's file (`diffscan`), and
this module says what "like it" is, read from the syntax tree, so that
whitespace, line breaks, quotes, trailing commas, comments and the joining
of adjacent string literals never count:

- the same kind (skip, xfail);
- in the same test: the functions and classes around it, a decorator
  belonging to the function it decorates, so a skip moved from test_a to
  test_b is new (it switches off another test);
- under the same conditions: the header of each `if`, `with`, `try`... it
  sits in within that test, and which branch, so `if win: pytest.skip()`
  made `if True: pytest.skip()` is new, on one line or on two;
- at the same place: the index of each statement on the way to it in its
  blocks, so a skip moved up a test, above the assertion it then dodges,
  is new (a formatter never adds, drops or reorders statements);
- the same statement: the decorator, or the innermost statement holding the
  marker (a compound's header when the marker is in it); a reason or a
  condition changed in it makes it new.

A file that does not parse gets no keys (None): then every marker on an
added line counts, as it did before keys. Pure: stdlib only, no I/O, and it
never raises, as the file is often mid-edit.
"""

from __future__ import annotations

import ast
import hashlib
import re
from bisect import bisect_right
from collections.abc import Iterator

from gatetui.pyparse import parse_python
from gatetui.stacks.codeview import normalize, python_view
from gatetui.stacks.python.tests import python_marker_hits
from gatetui.stacks.testdefs import KeyedMarker

__all__ = ["python_marker_keys"]

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BLOCKS = ("body", "orelse", "finalbody")
_NOT_HEADER = frozenset({*_BLOCKS, "handlers", "cases", "decorator_list", "type_comment"})
Position = tuple[int, int]  # (1-based line, UTF-8 byte column): how `ast` places nodes


def python_marker_keys(source: str) -> list[KeyedMarker] | None:
    """Every marker of the file, keyed; None when the file does not parse."""
    text = normalize(source)
    tree = parse_python(text)
    if tree is None:
        return None
    view = python_view(text)
    out: list[KeyedMarker] = []
    answers, column = _Tree(), _Columns(text)
    for offset, kind in sorted(python_marker_hits(view)):
        line = view.line_of(offset)
        statement, said = _locate(tree, (line, column.at(line, offset)), answers)
        out.append(KeyedMarker(line, kind, statement, "\0".join((kind, *said))))
    return out


class _Columns:
    """The UTF-8 byte column of an offset, as `ast` counts columns; asked in
    increasing order, each line's text is encoded once in all, so a long
    line of many markers costs no product of the two."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *(m.end() for m in re.finditer("\n", text))]  # of each line
        self._at = (-1, 0, 0)  # (line start, offset, its byte column)

    def at(self, line: int, offset: int) -> int:
        start = self.starts[line - 1]
        line_start, last, column = self._at
        if line_start != start or last > offset:
            last, column = start, 0
        column += len(self.text[last:offset].encode("utf-8", "surrogatepass"))
        self._at = (start, offset, column)
        return column


def _locate(tree: ast.Module, where: Position, answers: _Tree) -> tuple[Position, list[str]]:
    """Where the marker's statement starts, and what keys it: the names of
    the functions and classes around it, the conditions and places it
    sits under in the innermost of them, and the statement (or decorator)
    itself."""
    names: list[str] = []
    conditions: list[str] = []
    node: ast.AST = tree
    while True:
        found = answers.child_at(node, where)
        if found is None and isinstance(node, ast.Module):
            return where, ["", f"line {where[0]}"]  # in no statement: never matched by another
        if found is None:
            return _start(node), ["::".join(names), *conditions, answers.header(node)]
        branch, child = found
        if isinstance(node, (ast.Module, *_SCOPES)):
            conditions = [branch]
        else:
            conditions.append(f"{answers.header(node)} {branch}")
        if isinstance(child, _SCOPES):
            names.append(child.name)
            decorator = next((d for d in child.decorator_list if _holds(d, where)), None)
            if decorator is not None:
                return _start(decorator), ["::".join(names), answers.header(decorator)]
        node = child


class _Tree:
    """A parsed file's answers, each found once: where each statement of a
    block starts (a block's statements are in source order, so the one that
    may hold a position is found by bisection) and each statement's text as
    a key. A file of thousands of markers in thousands of statements, or in
    one statement thousands of lines long, costs no product of the two."""

    def __init__(self) -> None:
        self._starts: dict[int, tuple[list[ast.stmt], list[Position]]] = {}
        self._headers: dict[int, tuple[ast.AST, str]] = {}

    def child_at(self, node: ast.AST, where: Position) -> tuple[str, ast.AST] | None:
        """The statement of one of `node`'s blocks that holds `where`, named
        by its block (`body`, `orelse`, an `except`'s type...) and its index
        there: `body[2]`."""
        for branch, block in _blocks(node):
            if id(block) not in self._starts:
                self._starts[id(block)] = (block, [_first(child) for child in block])
            kept, starts = self._starts[id(block)]
            index = bisect_right(starts, where) - 1
            if index >= 0 and _holds(kept[index], where):
                return f"{branch}[{index}]", kept[index]
        return None

    def header(self, node: ast.AST) -> str:
        """`_header(node)` as a digest, remembered (the node is kept, so its
        id stays its own): a parametrize of a thousand cases is one long
        text, which every one of its markers' keys would otherwise copy."""
        if id(node) not in self._headers:
            digest = hashlib.blake2b(_header(node).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
            self._headers[id(node)] = (node, digest)
        return self._headers[id(node)][1]


def _blocks(node: ast.AST) -> Iterator[tuple[str, list[ast.stmt]]]:
    for name in _BLOCKS:
        block = getattr(node, name, None)
        if isinstance(block, list):
            yield name, block
    for handler in getattr(node, "handlers", ()):
        yield f"except {ast.dump(handler.type) if handler.type else ''}", handler.body
    for case in getattr(node, "cases", ()):
        yield f"case {ast.dump(case.pattern)} {ast.dump(case.guard) if case.guard else ''}", case.body


def _holds(node: ast.AST, where: Position) -> bool:
    start = _first(node)
    end = (getattr(node, "end_lineno", None) or start[0], getattr(node, "end_col_offset", None) or 0)
    return start <= where < end


def _first(node: ast.AST) -> Position:
    """Where `node` starts; a function or class at its first decorator,
    which `ast` places before the node itself."""
    return min([_start(node), *(_start(d) for d in getattr(node, "decorator_list", ()))])


def _start(node: ast.AST) -> Position:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _header(node: ast.AST) -> str:
    """A statement without the statements inside it: all of a simple one,
    the header of a compound one (`if`'s test, `with`'s items...)."""
    if not any(True for _ in _blocks(node)):
        return ast.dump(node)
    fields = [f"{name}={_dump(value)}" for name, value in ast.iter_fields(node) if name not in _NOT_HEADER]
    return f"{type(node).__name__}({', '.join(fields)})"


def _dump(value: object) -> str:
    if isinstance(value, ast.AST):
        return ast.dump(value)
    if isinstance(value, list):
        return f"[{', '.join(map(_dump, value))}]"
    return repr(value)
