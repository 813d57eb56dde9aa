"""Which of head's added lines only restate a statement base already had.

A line diff calls a reformatted statement new: parentheses dropped, three
lines joined into one, a call re-wrapped. The diff rules (a skip raised
from library code, code that reaches into the runner) would then name code
the project has had for years (pyparsing 3.2.0's `traceback.extract_stack`,
there since 3.0, only re-wrapped). A statement is the same when its syntax
tree is, in the same enclosing function or class: moved into another
function it is new, since the code around it is what it serves there.

A file that does not parse at either side has no statements to compare:
every added line stays new.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator

Key = tuple[str, str]  # (enclosing def/class path, the statement's syntax, header only for a block)
BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def restated(before: str, after: str) -> Callable[[int], bool]:
    """`is_old(line)`: whether head's line lies in a statement that base's
    file holds too, in the same function or class."""
    old, new = _statements(before), _statements(after)
    if old is None or new is None:
        return lambda line: False
    known = {key for _, _, key in old}

    def is_old(line: int) -> bool:
        spans = [(last - first, key) for first, last, key in new if first <= line <= last]
        return bool(spans) and min(spans)[1] in known

    return is_old


def _statements(source: str) -> list[tuple[int, int, Key]] | None:
    """(first line, last line, key) of every statement, None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return [
        (node.lineno, node.end_lineno or node.lineno, (where, _header(node))) for where, node in _walk(tree.body, "")
    ]


def _walk(body: list[ast.stmt], where: str) -> Iterator[tuple[str, ast.stmt]]:
    for node in body:
        yield where, node
        inner = (
            f"{where}.{node.name}" if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else where
        )
        for child in _blocks(node):
            if isinstance(child, ast.stmt):
                yield from _walk([child], inner)
            elif isinstance(child, (ast.ExceptHandler, ast.match_case)):
                yield from _walk(child.body, inner)


def _blocks(node: ast.AST) -> list[ast.AST]:
    """What the statement's blocks hold (bodies, else, finally, handlers, cases)."""
    return [
        child
        for field, value in ast.iter_fields(node)
        if field in BLOCK_FIELDS and isinstance(value, list)
        for child in value
    ]


def _header(node: ast.stmt) -> str:
    """The statement's syntax, positions left out; a block's without its
    body, so a change inside it leaves its header the same."""
    if not _blocks(node):
        return ast.dump(node)
    bare = copy.copy(node)
    for field, value in ast.iter_fields(node):
        if field in BLOCK_FIELDS and isinstance(value, list):
            setattr(bare, field, [])
    return ast.dump(bare)
