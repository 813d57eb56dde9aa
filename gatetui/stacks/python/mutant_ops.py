"""What one node of Python can become: the mutation operators.

Each operator gives an `Edit`: the node whose source holds the change, the
node it must parse to afterwards, and the pieces of its source to replace,
placed by the positions ast gives. The smallest piece is replaced, so the
change is exactly what a reviewer reads in the diff: an operator token
swapped in place (`a<b` -> `a<=b`, the operands' text and comments kept),
`not ` put before a condition, a constant, a return value or a statement
replaced by the text of its new node. An operator swaps within one
precedence level (`<` and `<=`, `+` and `-`, `*` and `/`), or puts an
expression where any expression may stand, so the new text parses where
the old stood; mutants.py checks each before it is used.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

Position = tuple[int, int]  # (line, UTF-8 byte column), as ast counts them

COMPARE_FLIPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
ARITH_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
}
TOKENS: dict[type[ast.AST], str] = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.And: "and",
    ast.Or: "or",
}
# Conditions that bind looser than `not`: negated, they are put in parentheses.
LOOSE = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr, ast.Yield, ast.YieldFrom)
# Simple statements whose removal (a `pass` in their place) changes what runs.
REMOVABLE = (
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Expr,
    ast.Raise,
    ast.Assert,
    ast.Delete,
    ast.Break,
    ast.Continue,
    ast.Return,
)
# An int nudged past this many digits would be slower to print than it is worth (and
# past 4300 digits Python refuses to print it).
MAX_INT_DIGITS = 100


@dataclass(frozen=True)
class Piece:
    """Replace the source from `start` to `end` with `text`; with `old`,
    the range is the gap between two operands (or an operator and its
    operand) and only the operator `old` in it is replaced, the gap's
    parentheses and comments kept (an operator removed takes the spaces
    after it along)."""

    start: Position
    end: Position
    text: str
    old: str = ""


@dataclass(frozen=True)
class Edit:
    operator: str  # one of mutation.OPERATORS
    node: ast.expr | ast.stmt  # whose source holds the change
    new: ast.AST  # what that source must parse to once the pieces are replaced
    pieces: tuple[Piece, ...]

    @property
    def line(self) -> int:
        return self.node.lineno

    @property
    def statement(self) -> bool:
        return isinstance(self.node, ast.stmt)


def start_of(node: ast.expr | ast.stmt) -> Position:
    return node.lineno, node.col_offset


def end_of(node: ast.expr | ast.stmt) -> Position:
    return node.end_lineno or node.lineno, node.end_col_offset or 0


def whole(node: ast.expr | ast.stmt, text: str) -> Piece:
    return Piece(start_of(node), end_of(node), text)


def swap(left: ast.expr, right: ast.expr, old: ast.AST, new: ast.AST) -> Piece:
    return Piece(end_of(left), start_of(right), TOKENS[type(new)], TOKENS[type(old)])


def expression_edits(node: ast.expr) -> Iterator[Edit]:
    """Every mutant of one expression node (its children are nodes of their own)."""
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            flipped = COMPARE_FLIPS.get(type(op))
            if flipped is not None:
                ops = [*node.ops[:i], flipped(), *node.ops[i + 1 :]]
                yield Edit(
                    "compare",
                    node,
                    ast.Compare(node.left, ops, node.comparators),
                    (swap(operands[i], operands[i + 1], op, ops[i]),),
                )
    elif isinstance(node, ast.BoolOp):
        other: ast.boolop = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        gaps = zip(node.values, node.values[1:])
        yield Edit(
            "boolean",
            node,
            ast.BoolOp(other, node.values),
            tuple(swap(left, right, node.op, other) for left, right in gaps),
        )
    elif isinstance(node, ast.BinOp) and type(node.op) in ARITH_SWAPS:
        arith = ARITH_SWAPS[type(node.op)]()
        changed = ast.BinOp(node.left, arith, node.right)
        yield Edit("arith", node, changed, (swap(node.left, node.right, node.op, arith),))
    elif isinstance(node, ast.Constant):
        nudged = nudge(node.value)
        if nudged is not None:
            new = ast.Constant(nudged[0])
            yield Edit("constant", node, new, (whole(node, ast.unparse(new)),))


def nudge(value: object) -> tuple[bool | int | str] | None:
    """The constant one step away (in a 1-tuple: False is a value), or None
    when there is none worth trying (None, floats, bytes, empty strings)."""
    if isinstance(value, bool):
        return (not value,)
    if isinstance(value, int) and 0 <= value < 10**MAX_INT_DIGITS:
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
        yield Edit("return-none", stmt.value, ast.Constant(None), (whole(stmt.value, "None"),))
    if isinstance(stmt, (ast.If, ast.While)) and not isinstance(stmt.test, ast.Constant):
        yield negated(stmt.test)
    if isinstance(stmt, ast.AugAssign) and type(stmt.op) in ARITH_SWAPS:
        arith = ARITH_SWAPS[type(stmt.op)]()
        piece = Piece(end_of(stmt.target), start_of(stmt.value), TOKENS[type(arith)] + "=", TOKENS[type(stmt.op)] + "=")
        yield Edit("arith", stmt, ast.AugAssign(stmt.target, arith, stmt.value), (piece,))
    if removable(stmt) and not idle:
        yield Edit("remove", stmt, ast.Pass(), (whole(stmt, "pass"),))


def negated(test: ast.expr) -> Edit:
    """`not` put before a condition, or taken from one that has it."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        operand = test.operand
        # only the keyword goes: parentheses after it may be what lets the operand span lines
        return Edit("negate", test, operand, (Piece(start_of(test), start_of(operand), "", "not"),))
    new = ast.UnaryOp(ast.Not(), test)
    if isinstance(test, LOOSE):
        wrapped = (Piece(start_of(test), start_of(test), "not ("), Piece(end_of(test), end_of(test), ")"))
        return Edit("negate", test, new, wrapped)
    return Edit("negate", test, new, (Piece(start_of(test), start_of(test), "not "),))


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
