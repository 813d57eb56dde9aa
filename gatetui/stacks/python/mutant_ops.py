"""What one node of Python can become: the mutation operators.

Each operator gives `Edit`s: a node of the original, whose own source span
is replaced, and what replaces it, made by `ast.unparse` of the changed
node alone, so the rest of the file keeps its comments and layout.
An operator swaps within one precedence level (`<` and `<=`, `+` and `-`,
`*` and `/`), or puts an expression where any expression may stand (an
`if` test, a return value), so the text fits where the old one stood; the
caller still parses each replacement on its own before it is used.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

COMPARE_FLIPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
ARITH_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
}
# Simple statements whose removal (a `pass` in their place) changes what runs.
REMOVABLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Raise, ast.Assert, ast.Delete,
             ast.Break, ast.Continue, ast.Return)
# An int nudged past this many digits would be slower to print than it is worth (and
# past 4300 digits Python refuses to print it).
MAX_INT_DIGITS = 100


@dataclass(frozen=True)
class Edit:
    """Replace the source of `node` (its own span) with `new`: a changed
    node, unparsed when the mutant is made, or the text itself."""

    operator: str
    node: ast.expr | ast.stmt
    new: ast.AST | str

    @property
    def line(self) -> int:
        return self.node.lineno

    @property
    def start(self) -> tuple[int, int]:
        """(line, utf-8 byte column), as ast counts them."""
        return self.node.lineno, self.node.col_offset

    @property
    def end(self) -> tuple[int, int]:
        return self.node.end_lineno or self.node.lineno, self.node.end_col_offset or 0

    @property
    def statement(self) -> bool:
        return isinstance(self.node, ast.stmt)


def expression_edits(node: ast.expr) -> Iterator[Edit]:
    """Every mutant of one expression node (its children are nodes of their own)."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            flipped = COMPARE_FLIPS.get(type(op))
            if flipped is not None:
                ops = [*node.ops[:i], flipped(), *node.ops[i + 1:]]
                yield Edit("compare", node, ast.Compare(node.left, ops, node.comparators))
    elif isinstance(node, ast.BoolOp):
        swapped: ast.boolop = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield Edit("boolean", node, ast.BoolOp(swapped, node.values))
    elif isinstance(node, ast.BinOp):
        arith = ARITH_SWAPS.get(type(node.op))
        if arith is not None:
            yield Edit("arith", node, ast.BinOp(node.left, arith(), node.right))
    elif isinstance(node, ast.Constant):
        nudged = nudge(node.value)
        if nudged is not None:
            yield Edit("constant", node, ast.Constant(nudged[0]))


def nudge(value: object) -> tuple[bool | int | str] | None:
    """The constant one step away (in a 1-tuple: False is a value), or None
    when there is none worth trying (None, floats, bytes, empty strings)."""
    if isinstance(value, bool):
        return (not value,)
    if isinstance(value, int) and 0 <= value < 10 ** MAX_INT_DIGITS:
        return (value + 1,)
    if isinstance(value, str) and value:
        return ("",)
    return None


def statement_edits(stmt: ast.stmt, idle: bool = False) -> Iterator[Edit]:
    """Every mutant of one statement itself: its return value, its
    condition, its operator, or the statement gone. The expressions in it
    give their own (see expression_edits). `idle`: where it stands, the
    statement does what the end of its block does anyway (a bare `return`
    ending a function, a `continue` ending a loop), so it is not removed."""
    if isinstance(stmt, ast.Return) and stmt.value is not None and not is_none(stmt.value):
        yield Edit("return-none", stmt.value, "None")
    if isinstance(stmt, (ast.If, ast.While)) and not isinstance(stmt.test, ast.Constant):
        test = stmt.test
        negated = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) \
            else ast.UnaryOp(ast.Not(), test)
        yield Edit("negate", test, negated)
    if isinstance(stmt, ast.AugAssign):
        arith = ARITH_SWAPS.get(type(stmt.op))
        if arith is not None:
            yield Edit("arith", stmt, ast.AugAssign(stmt.target, arith(), stmt.value))
    if removable(stmt) and not idle:
        yield Edit("remove", stmt, "pass")


def removable(stmt: ast.stmt) -> bool:
    """A simple statement whose absence changes what runs: not a `return x`
    (return-none is its mutant) nor an annotation alone."""
    if isinstance(stmt, ast.Return):
        return stmt.value is None
    if isinstance(stmt, ast.AnnAssign):
        return stmt.value is not None
    return isinstance(stmt, REMOVABLE)


def is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None
