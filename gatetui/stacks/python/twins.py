"""A twin of head's module for `bites`' control: code that runs as head's
does but reads as a mutant does.

The control (gate/phases/control.py) runs the tests that killed mutants
once more with a "mutant" that changes nothing a test can run into: a kill
by a test that fails there too was made by something other than the
mutant's behaviour. Head's own text as that "mutant" would leave one tell
standing: a test that compares the code it is handed (the bytes the gate's
loader holds, the module's bytecode, its source) with a fingerprint of
head's text fails under every real mutant and passes the control. A twin
differs from head exactly where the mutants do, on their lines, so such a
test fails the control too.

On each line, the outermost expression that starts there and stands in a
place any expression may is wrapped in an identity drawn per twin
(`[(x)][0]`, `[(x)][-1]`, `{0: (x)}[0]`, `[(x)].pop()`): the value is
computed once, in the same scope, and handed on as it is; none of these
is folded away by the compiler, so the bytecode differs as the text does.
The whole twin is parsed again and must be head's tree with those nodes
wrapped, or there is no twin (the control then runs head's own text).
"""

from __future__ import annotations

import ast
import secrets
from collections.abc import Callable, Iterator, Sequence

from gatetui.pyparse import parse_python
from gatetui.stacks.python.mutant_ops import end_of, start_of
from gatetui.stacks.python.mutants import Source, spliced, utf8

Wrap = tuple[str, str, Callable[[ast.expr], ast.expr]]


def _subscript(container: Callable[[ast.expr], ast.expr], index: int) -> Callable[[ast.expr], ast.expr]:
    key: ast.expr = ast.Constant(index) if index >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-index))
    return lambda node: ast.Subscript(container(node), key, ast.Load())


WRAPS: tuple[Wrap, ...] = (
    ("[(", ")][0]", _subscript(lambda node: ast.List([node], ast.Load()), 0)),
    ("[(", ")][-1]", _subscript(lambda node: ast.List([node], ast.Load()), -1)),
    ("{0: (", ")}[0]", _subscript(lambda node: ast.Dict([ast.Constant(0)], [node]), 0)),
    ("[(", ")].pop()", lambda node: ast.Call(ast.Attribute(ast.List([node], ast.Load()), "pop", ast.Load()), [], [])),
)
# fields whose expressions are not evaluated as written (annotations may be
# kept as text), or where an expression cannot stand (a match pattern)
NOT_HERE = frozenset({"annotation", "returns", "pattern", "format_spec", "type_comment"})


def twin(text: str, lines: frozenset[int], draw: Callable[[Sequence[Wrap]], Wrap] = secrets.choice) -> bytes | None:
    """Head's `text` with one expression on each of `lines` wrapped in an
    identity (one of WRAPS, drawn); None when no line has one or the result
    is not head's tree with just those wraps."""
    data = utf8(text)
    tree = parse_python(text) if data is not None else None
    if data is None or tree is None:
        return None
    chosen = [node for node in (_outermost(tree, line) for line in sorted(lines)) if node is not None]
    if not chosen:
        return None
    opening, closing, build = draw(WRAPS)
    source = Source(data)
    spans = [source.span(node) for node in chosen]
    if any(span is None for span in spans):
        return None
    new = data
    for first, last in sorted((span for span in spans if span is not None), reverse=True):
        new = spliced(new, last, last, closing.encode())
        new = spliced(new, first, first, opening.encode())
    return new if _as_meant(new, tree, chosen, build) else None


def _outermost(tree: ast.AST, line: int) -> ast.expr | None:
    """The outermost wrappable expression starting on `line`: the first to
    start there, the longest of those."""
    found = [node for node in _wrappable(tree) if start_of(node)[0] == line]
    return min(found, key=lambda node: (start_of(node)[1], tuple(-at for at in end_of(node))), default=None)


def _wrappable(node: ast.AST) -> Iterator[ast.expr]:
    """Every expression that may be wrapped: evaluated where it stands, for
    its value, never a target, a docstring, an f-string's piece, a slice or
    a starred item."""
    body = getattr(node, "body", None)
    docstring = body[0] if isinstance(body, list) and body and _is_docstring(body[0]) else None
    for name, value in ast.iter_fields(node):
        if name in NOT_HERE:
            continue
        for child in value if isinstance(value, list) else [value]:
            if not isinstance(child, ast.AST) or child is docstring or isinstance(child, ast.JoinedStr):
                continue
            if isinstance(child, ast.expr) and _plain(child):
                yield child
            yield from _wrappable(child)


def _plain(node: ast.expr) -> bool:
    context = getattr(node, "ctx", None)
    return not isinstance(node, (ast.Starred, ast.Slice)) and not isinstance(context, (ast.Store, ast.Del))


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _as_meant(new: bytes, tree: ast.AST, chosen: list[ast.expr], build: Callable[[ast.expr], ast.expr]) -> bool:
    """Whether the twin parses to head's tree with exactly the chosen nodes wrapped."""
    try:
        found = parse_python(new.decode("utf-8"))
    except UnicodeError:
        return False
    if found is None:
        return False
    marked = {id(node) for node in chosen}

    class Wrapped(ast.NodeTransformer):
        def visit(self, node: ast.AST) -> ast.AST:
            inner = self.generic_visit(node)
            return build(inner) if id(node) in marked and isinstance(inner, ast.expr) else inner

    expected = Wrapped().visit(tree)  # head's tree, parsed for this twin alone: rewritten in place
    return ast.dump(found) == ast.dump(expected)
