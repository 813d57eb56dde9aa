"""Twins (stacks/python/twins.py): head's module, read differently on the
mutants' lines, run the same. `bites`' control runs one in a mutant's
place, so a test that compares the code it is handed with head's text
fails there too; tests/gated/test_mutant_runs_gated.py gates such tests."""

from __future__ import annotations

import ast
import dis
from types import FunctionType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatetui.stacks.python.twins import WRAPS, twin
from tests.support.python_sources import modules

CLAMP = '''"""Clamping."""


def clamp(x: int, lo: int, hi: int) -> int:
    """The nearest of lo..hi."""
    if x > hi:
        return hi
    return max(lo, x)
'''


def drawn(index: int):  # type: ignore[no-untyped-def]
    return lambda wraps: wraps[index]


@pytest.mark.parametrize(
    ("index", "line"),
    [
        (0, "    if [(x > hi)][0]:"),
        (1, "    if [(x > hi)][-1]:"),
        (2, "    if {0: (x > hi)}[0]:"),
        (3, "    if [(x > hi)].pop():"),
    ],
)
def test_each_wrap_puts_the_lines_outermost_expression_inside_an_identity(index: int, line: str) -> None:
    made = twin(CLAMP, frozenset({6}), drawn(index)) or b""
    assert made.decode().splitlines() == [*CLAMP.splitlines()[:5], line, *CLAMP.splitlines()[6:]]


def test_every_line_asked_is_wrapped_with_one_identity_drawn_per_twin() -> None:
    made = twin(CLAMP, frozenset({6, 7, 8}), drawn(0)) or b""
    assert made.decode().splitlines()[5:] == [
        "    if [(x > hi)][0]:",
        "        return [(hi)][0]",
        "    return [(max(lo, x))][0]",
    ]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (CLAMP, 1),  # the module's docstring
        (CLAMP, 5),  # a function's docstring
        (CLAMP, 4),  # only annotations on the def line
        ("def f(xs):\n    global g\n", 2),  # no expression at all
        ("def f(x):\n    return f'{x + 1}'\n", 2),  # inside an f-string only
        ("def f(x):\n    pass\n", 2),
    ],
)
def test_lines_with_nothing_to_wrap_give_no_twin(text: str, line: int) -> None:
    assert twin(text, frozenset({line}), drawn(0)) is None


def test_a_line_inside_a_longer_statement_wraps_what_starts_there() -> None:
    made = twin("def f(x, xs):\n    a, *b = (\n        x + 1, xs)\n", frozenset({3}), drawn(0))
    assert made == b"def f(x, xs):\n    a, *b = (\n        [(x + 1)][0], xs)\n"


def test_text_that_does_not_parse_gives_no_twin() -> None:
    assert twin("def f(:\n", frozenset({1}), drawn(0)) is None


def functions(text: str | bytes) -> dict[str, Any]:
    space: dict[str, Any] = {}
    exec(compile(text, "m.py", "exec"), space)  # noqa: S102 - the test's own generated text
    return {name: value for name, value in space.items() if isinstance(value, FunctionType)}


def outcome(function: Any, *args: int) -> object:
    try:
        return ("returned", function(*args))
    except Exception as err:  # noqa: BLE001 - the same error is the same outcome
        return ("raised", type(err).__name__)


OPERANDS = st.sampled_from(["x", "y", "lo", "3", "-2", "(x * y)", "len([x, y])", "min(x, y)"])
OPERATORS = st.sampled_from(["+", "-", "*", "//", "%", "<", "<=", "==", "and", "or"])
EXPRESSIONS = st.builds(lambda a, op, b: f"{a} {op} {b}", OPERANDS, OPERATORS, OPERANDS)


@given(st.lists(EXPRESSIONS, min_size=3, max_size=3), st.sampled_from(range(len(WRAPS))), st.data())
def test_a_twin_computes_what_head_computes_and_its_bytecode_differs(
    expressions: list[str], index: int, data: st.DataObject
) -> None:
    first, second, third = expressions
    text = f"def f(x, y, lo=0):\n    a = {first}\n    if x < ({second}):\n        return a\n    return [a, {third}]\n"
    lines = data.draw(st.sets(st.sampled_from([2, 3, 4, 5]), min_size=1).map(frozenset))
    made = twin(text, lines, drawn(index)) or b"# no twin"
    head, other = functions(text)["f"], functions(made)["f"]
    assert dis.Bytecode(head).dis() != dis.Bytecode(other).dis()
    for x in range(-3, 4):
        for y in (-2, 0, 5):
            assert outcome(other, x, y) == outcome(head, x, y)


@given(modules(), st.data())
def test_a_twin_of_a_generated_module_parses_differs_and_keeps_its_lines(source: str, data: st.DataObject) -> None:
    count = len(source.encode().splitlines())
    lines = data.draw(st.sets(st.integers(1, count), min_size=1).map(frozenset))
    made = twin(source, lines, drawn(data.draw(st.sampled_from(range(len(WRAPS))))))
    if made is None:
        return
    assert ast.dump(ast.parse(made)) != ast.dump(ast.parse(source))
    assert len(made.splitlines()) == count


def test_the_wraps_are_the_ones_the_docstring_names() -> None:
    assert [(opening, closing) for opening, closing, _ in WRAPS] == [
        ("[(", ")][0]"),
        ("[(", ")][-1]"),
        ("{0: (", ")}[0]"),
        ("[(", ")].pop()"),
    ]
    assert [ast.unparse(build(ast.Name("x", ast.Load()))) for _, _, build in WRAPS] == [
        "[x][0]",
        "[x][-1]",
        "{0: x}[0]",
        "[x].pop()",
    ]
