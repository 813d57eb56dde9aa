"""Hypothesis strategies for Python modules of the kind a change holds:
functions with comparisons, boolean and arithmetic expressions, returns,
ifs, loops, asserts, logging and prints, docstrings, comments, f-strings,
annotations, statements joined by `;`, expressions over several lines,
compact spacing (`if(a)<b:`), non-ASCII names and strings, and CRLF or CR
line ends. Every module drawn parses (its operands are parenthesized where
Python's grammar needs it)."""

from __future__ import annotations

from hypothesis import strategies as st

NAMES = st.sampled_from(["a", "b", "n", "xs", "é", "self.count"])
STRINGS = st.text(alphabet="ab é'\"\\\t", max_size=4).map(repr)
ATOMS = st.one_of(
    NAMES, st.integers(0, 1000).map(str), STRINGS, st.sampled_from(["True", "False", "None", "1.5", "b'x'", "..."])
)
COMPARE = ["<", "<=", ">", ">=", "==", "!=", "in", "not in", "is", "is not"]
ARITH = ["+", "-", "*", "/", "//", "%"]


def space(op: str) -> st.SearchStrategy[str]:
    """An operator with the spacing people write, or none where Python allows it."""
    return st.sampled_from([f" {op} ", f"{op}"] if not op[-1].isalpha() else [f" {op} "])


def tight(expr: str) -> str:
    """An operand that binds no looser than any operator: parenthesized
    unless it is an atom or already in brackets."""
    return expr if expr.replace(".", "").replace("'", "").replace('"', "").isalnum() else f"({expr})"


@st.composite
def binary(draw: st.DrawFn, inner: st.SearchStrategy[str]) -> str:
    op = draw(st.sampled_from(COMPARE + ARITH + ["and", "or"]))
    left, right = tight(draw(inner)), tight(draw(inner))
    if draw(st.booleans()):  # a chain of the same operator, without parentheses
        return f"{left}{draw(space(op))}{right}{draw(space(op))}{tight(draw(inner))}"
    return f"{left}{draw(space(op))}{right}"


EXPRESSIONS = st.recursive(
    ATOMS,
    lambda inner: st.one_of(
        binary(inner),
        inner.map(lambda e: f"not {tight(e)}"),
        st.tuples(inner, inner).map(lambda p: f"f({p[0]}, key={p[1]})"),
        st.tuples(inner, inner, inner).map(lambda p: f"{tight(p[0])} if {tight(p[1])} else {tight(p[2])}"),
        st.tuples(inner, inner).map(lambda p: f"(\n        {p[0]}  # why\n        + {tight(p[1])})"),
        inner.map(lambda e: f"[v for v in xs if {tight(e)}]"),
    ),
    max_leaves=5,
)


def simple(expr: str, kind: int) -> str:
    return [
        f"x = {expr}",
        f"x += {tight(expr)}",
        f"return {expr}",
        "return",
        f"assert {expr}",
        f"log.info('%s', {expr})",
        f"print({expr})",
        "pass",
        "...",
        f"x = 1; y = {expr}",
        f"t: int = {expr}",
        "s = f'{a < b!r} and {n + 1}'",
        f"x = {expr} \\\n        + 1",
        "raise ValueError(x)",
        "break",
        "continue",
    ][kind]


def header(expr: str, kind: int) -> str:
    return [f"if {expr}:", f"while {expr}:", f"for v in {tight(expr)}:", "if(a)<b:"][kind]


@st.composite
def block(draw: st.DrawFn, indent: str, depth: int, in_loop: bool) -> list[str]:
    """Statements at one indentation; `break` and `continue` only inside loops."""
    out: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        expr = draw(EXPRESSIONS)
        if depth < 2 and draw(st.integers(0, 3)) == 0:
            kind = draw(st.integers(0, 3))
            out.append(indent + header(expr, kind))
            out += draw(block(indent + "    ", depth + 1, in_loop or kind in (1, 2)))
            if kind == 0 and draw(st.booleans()):
                out += [indent + f"elif {draw(EXPRESSIONS)}:", indent + "    return x"]
        else:
            out.append(indent + simple(expr, draw(st.integers(0, 15 if in_loop else 13))))
        if draw(st.integers(0, 5)) == 0:
            out.append(indent + "# a comment")
    return out


@st.composite
def modules(draw: st.DrawFn) -> str:
    """A module of one to three functions, with a module docstring, and
    lines ended by \\n, \\r\\n or \\r."""
    lines = ['"""A module."""', "import logging", "log = logging.getLogger(__name__)"]
    for i in range(draw(st.integers(1, 3))):
        lines += [f"def f{i}(a: int, b={draw(EXPRESSIONS)}, *xs: str) -> bool:", '    """Why it is."""']
        lines += draw(block("    ", 0, False))
    end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    return end.join(lines) + end
