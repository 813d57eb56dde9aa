"""The mutant engine: the python stack's mutants of changed
lines (each operator, what is skipped, hostile files), the bounded choice
among them, and the properties every mutant holds on generated modules."""

from __future__ import annotations

import ast
import warnings
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatetui.git.snapshot import Snapshot
from gatetui.stacks import mutation
from gatetui.stacks.mutation import Mutant, pick
from gatetui.stacks.python import mutants
from gatetui.stacks.python.mutants import mutate
from gatetui.stacks.registry import load_profile
from tests.support.python_sources import modules


def everywhere(source: str) -> frozenset[int]:
    return frozenset(range(1, source.count("\n") + source.count("\r") + 2))


def made(source: str, lines: frozenset[int] | None = None) -> list[tuple[int, str, str]]:
    """(line, operator, mutated line) of every mutant, in the order given."""
    return [(m.line, m.operator, m.after) for m in mutate("m.py", source, lines or everywhere(source))]


def afters(source: str, operator: str) -> list[str]:
    return [after for _, kind, after in made(source) if kind == operator]


FLIPS = [
    ("<", "<="),
    ("<=", "<"),
    (">", ">="),
    (">=", ">"),
    ("==", "!="),
    ("!=", "=="),
    ("in", "not in"),
    ("not in", "in"),
    ("is", "is not"),
    ("is not", "is"),
]


@pytest.mark.parametrize(("op", "flipped"), FLIPS)
def test_a_comparison_flips_to_its_neighbour(op: str, flipped: str) -> None:
    assert afters(f"ok = a {op} b\n", "compare") == [f"ok = a {flipped} b"]


def test_each_operator_of_a_chained_comparison_flips_alone() -> None:
    assert afters("ok = 0 < a <= 9\n", "compare") == ["ok = 0 <= a <= 9", "ok = 0 < a < 9"]


@pytest.mark.parametrize(
    ("line", "swapped"), [("ok = a and b", "ok = a or b"), ("ok = a or b or c", "ok = a and b and c")]
)
def test_and_and_or_swap(line: str, swapped: str) -> None:
    assert afters(line + "\n", "boolean") == [swapped]


@pytest.mark.parametrize(
    ("line", "swapped"),
    [
        ("x = a + b", "x = a - b"),
        ("x = a - b", "x = a + b"),
        ("x = a * b", "x = a / b"),
        ("x = a / b", "x = a * b"),
        ("x += b", "x -= b"),
        ("x *= b", "x /= b"),
        ("x = a % b", None),
    ],
)
def test_arithmetic_swaps_plus_with_minus_and_times_with_divide(line: str, swapped: str | None) -> None:
    assert afters(line + "\n", "arith") == ([swapped] if swapped else [])


@pytest.mark.parametrize(
    ("line", "nudged"),
    [
        ("x = 41", "x = 42"),
        ("x = True", "x = False"),
        ("x = False", "x = True"),
        ("x = 'yes'", "x = ''"),
        ("x = 0x10", "x = 17"),
        ("x = None", None),
        ("x = 1.5", None),
        ("x = b'raw'", None),
        ("x = ''", None),
        ("x = -1", "x = -2"),
    ],
)
def test_a_constant_is_nudged(line: str, nudged: str | None) -> None:
    assert afters(line + "\n", "constant") == ([nudged] if nudged else [])


def test_a_return_value_becomes_none() -> None:
    source = "def f(a):\n    if a:\n        return a + 1  # one more\n    return None\n"
    assert afters(source, "return-none") == ["return None  # one more"]


@pytest.mark.parametrize(
    ("header", "negated"),
    [
        ("if a < b:", "if not a < b:"),
        ("if not ready:", "if ready:"),
        ("while x and y:", "while not (x and y):"),
        ("if (n := f()):", "if (not (n := f())):"),
        ("while True:", None),
    ],
)
def test_an_if_or_while_condition_is_negated(header: str, negated: str | None) -> None:
    assert afters(f"{header}\n    g()\n", "negate") == ([negated] if negated else [])


def test_a_negation_taken_away_keeps_the_parentheses_that_let_its_operand_span_lines() -> None:
    source = "if not (a  # why\n        + b):\n    g()\n"
    [negate] = [m for m in mutate("m.py", source, frozenset({1})) if m.operator == "negate"]
    assert negate.source == b"if (a  # why\n        + b):\n    g()\n"


def test_a_removed_statement_leaves_pass_where_it_stood() -> None:
    source = "def f(a):\n    total = a  # start\n    total += 1; g()\n    return total\n"
    removed = [m for m in mutate("m.py", source, frozenset({2, 3})) if m.operator == "remove"]
    assert [(m.line, m.before, m.after) for m in removed] == [
        (2, "total = a  # start", ""),
        (3, "total += 1; g()", ""),
        (3, "total += 1; g()", ""),
    ]
    assert [m.source for m in removed] == [
        b"def f(a):\n    pass  # start\n    total += 1; g()\n    return total\n",
        b"def f(a):\n    total = a  # start\n    pass; g()\n    return total\n",
        b"def f(a):\n    total = a  # start\n    total += 1; pass\n    return total\n",
    ]


def test_a_line_gives_its_mutants_in_operator_order_then_left_to_right() -> None:
    assert made("if a < b and c > 0:\n    g()\n", frozenset({1})) == [
        (1, "compare", "if a <= b and c > 0:"),
        (1, "compare", "if a < b and c >= 0:"),
        (1, "boolean", "if a < b or c > 0:"),
        (1, "negate", "if not (a < b and c > 0):"),
        (1, "constant", "if a < b and c > 1:"),
    ]


def test_only_the_changed_lines_are_mutated() -> None:
    source = "x = a < b\ny = c < d\nz = e < f\n"
    assert made(source, frozenset({2})) == [(2, "compare", "y = c <= d"), (2, "remove", "")]


def test_a_change_inside_a_node_over_several_lines_shows_them_joined() -> None:
    assert afters("ok = (a  # why\n      < b)\n", "compare") == ["ok = (a  # why <= b)"]


def test_the_rest_of_the_file_is_kept_byte_for_byte() -> None:
    source = "# head\ndef f(a, b):  # why\n    return (a <\n            b)  # note\n\n\nX = 1  # tail\n"
    compare = [m for m in mutate("m.py", source, frozenset({3})) if m.operator == "compare"]
    assert [m.source for m in compare] == [
        b"# head\ndef f(a, b):  # why\n    return (a <=\n            b)  # note\n\n\nX = 1  # tail\n"
    ]


def test_an_operator_is_swapped_in_place_between_parentheses_comments_and_odd_spacing() -> None:
    source = "ok = ((a)  # left <\n      )<(  # right\n      b) or c not  in d\n"
    assert [m.source for m in mutate("m.py", source, frozenset({1, 3})) if m.operator == "compare"] == [
        b"ok = ((a)  # left <\n      )<=(  # right\n      b) or c not  in d\n",
        b"ok = ((a)  # left <\n      )<(  # right\n      b) or c in d\n",
    ]


@pytest.mark.parametrize("end", ["\r\n", "\r"])
def test_windows_and_old_mac_line_ends_are_kept(end: str) -> None:
    source = end.join(["def f(a):", "    return a < 1", ""])
    compare = [m for m in mutate("m.py", source, frozenset({2})) if m.operator == "compare"]
    assert [m.source for m in compare] == [end.join(["def f(a):", "    return a <= 1", ""]).encode()]


def test_columns_are_counted_in_utf8_bytes_as_ast_counts_them() -> None:
    assert afters('s = "é€"; ok = a < b\n', "compare") == ['s = "é€"; ok = a <= b']


def test_a_replacement_never_runs_into_a_neighbouring_word() -> None:
    assert afters("if(a)<b:\n    g()\n", "compare") == ["if(a)<=b:"]
    assert afters("x = 1if(a)in b else 2\n", "compare") == ["x = 1if(a)not in b else 2"]
    assert afters("x = 1in b\n", "compare") == ["x = 1 not in b"]
    assert afters('if"a"in b:\n    g()\n', "negate") == ['if not "a"in b:']
    assert afters("ok = 9if a else 1\n", "constant") == ["ok = 10 if a else 1", "ok = 9if a else 2"]


@pytest.mark.parametrize(
    "source",
    [
        '"""A module docstring."""\n',
        "def f():\n    'A docstring.'\n",
        "import os\nfrom a import b as c\n",
        "def f():\n    pass\n",
        "def f():\n    ...\n",
        "log.info('n=%d', n + 1)\n",
        "logger.warning('x' if a < b else 'y')\n",
        "self.log.debug(1)\n",
        "logging.error('%s', a == b)\n",
        "print(a < b, 1)\n",
        "sys.stderr.write('x' * 2)\n",
        "x: int\n",
        "if TYPE_CHECKING:\n    from a import B\n",
        "if typing.TYPE_CHECKING:\n    x = 1\n",
        "if __name__ == '__main__':\n    main(1 + 2)\n",
        "__all__ = ['a', 'b']\n",
        "global x\n",
        "def f():\n    g()\n    return\n",
        "for v in xs:\n    g()\n    continue\n",
    ],
)
def test_lines_where_no_mutant_can_change_behaviour_give_none(source: str) -> None:
    """Docstrings, imports, pass, `...`, log and print calls, annotations,
    type-checking and script-entry blocks, `__all__`, and a bare return or
    continue that ends its body (the calls before them are g(), changed on
    line 2 of 3, and left out here)."""
    assert [m for m in made(source) if "g()" not in m[2] and m[:2] != (2, "remove")] == []


def test_module_metadata_is_left_alone_and_code_that_uses_such_names_is_not() -> None:
    """idna 3.10's uts46data.py: `__version__ = "15.1.0"` made '' survived
    every test (none should pin a data table's version). Only module-level
    metadata: a class's `__hash__ = None` changes behaviour, so does a name
    the code reads beside it (`__version__ = version = ...`)."""
    source = (
        '__version__ = "15.1.0"\n__author__ = __maintainer__ = "Kim"\n__version_info__: tuple = (15, 1)\n'
        'try:\n    __version__ = lookup("idna")\nexcept KeyError:\n    __version__ = "0"\n'
        'LIMIT = 63\n__version__ = version = "2"\nclass Label:\n    __hash__ = None\n'
        "def f():\n    __version__ = 1\n    return __version__\n"
    )
    assert made(source) == [
        (8, "constant", "LIMIT = 64"),
        (8, "remove", ""),
        (9, "constant", "__version__ = version = ''"),
        (9, "remove", ""),
        (11, "remove", ""),
        (13, "constant", "__version__ = 2"),
        (13, "remove", ""),
        (14, "return-none", "return None"),
    ]


def test_type_hints_are_left_alone_and_defaults_are_not() -> None:
    source = "def f(a: Literal[1] = 2, *, b: 'str' = 'x') -> Literal[True]:\n    return a\ny: Literal[3] = 4\n"
    assert made(source) == [
        (1, "constant", "def f(a: Literal[1] = 3, *, b: 'str' = 'x') -> Literal[True]:"),
        (1, "constant", "def f(a: Literal[1] = 2, *, b: 'str' = '') -> Literal[True]:"),
        (2, "return-none", "return None"),
        (3, "constant", "y: Literal[3] = 5"),
        (3, "remove", ""),
    ]


def test_f_string_insides_and_match_patterns_are_left_alone() -> None:
    source = "s = f'{a < b} {n + 1}'\nmatch x:\n    case 1 | 'a':\n        y = 2\n"
    assert made(source) == [(1, "remove", ""), (4, "constant", "y = 3"), (4, "remove", "")]


@pytest.mark.parametrize(
    "source",
    [
        "def f(:\n    return a < b\n",  # does not parse
        "# -*- coding: latin-1 -*-\nx = 'é' < a\n",  # declares an encoding its mutants would not be read back in
        "x = '\udc80' < a\n",  # a lone surrogate: no UTF-8 bytes
        "x = a < b\x00\n",  # a null byte
        "\ufeffx = a < b\n",  # a byte-order mark inside the text
        "x = " + "(" * 300 + "a < b" + ")" * 300 + "\n",  # deeper than the parser goes
        "x = " + "+".join(["a"] * 20000) + "\n",  # deeper than ast is built
        "x = a < b\n" * 30000,  # larger than any reviewed file
    ],
)
def test_a_hostile_file_gives_no_mutants(source: str) -> None:
    assert mutate("m.py", source, everywhere(source[:100])) == []


def test_an_ascii_file_that_declares_another_encoding_is_mutated() -> None:
    assert afters("# -*- coding: latin-1 -*-\nx = a < b\n", "compare") == ["x = a <= b"]


def test_a_node_wider_than_a_readable_diff_is_left_alone_and_its_parts_are_not() -> None:
    """A 600-term sum nests 600 deep: the outer sums span more than a
    diff line shows, the inner ones are mutated (those that unparse within
    Python's recursion limit), and nothing raises."""
    source = "x = " + " + ".join(["a"] * 600) + "\n"
    found = mutate("m.py", source, frozenset({1}))
    flipped = sorted(m.after[: m.after.index(" - ")].count(" + ") for m in found if m.operator == "arith")
    assert (flipped == list(range(len(flipped))), 100 < len(flipped) <= mutants.MAX_SPAN // 4) == (True, True)


def test_the_mutants_kept_are_bounded_in_bytes_and_taken_round_robin_over_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = "x = a < b < c\ny = a < b < c\nz = a < b < c\n"
    monkeypatch.setattr(mutants, "MAX_KEPT", len(source) * 4)
    assert made(source) == [
        (1, "compare", "x = a <= b < c"),
        (1, "compare", "x = a < b <= c"),
        (2, "compare", "y = a <= b < c"),
        (3, "compare", "z = a <= b < c"),
    ]


def mutant(line: int, n: int, path: str = "m.py") -> Mutant:
    return Mutant(path, line, "compare", f"line {line}", f"mutant {n}", b"")


def test_pick_goes_round_robin_over_the_lines_and_counts_the_untried() -> None:
    per_line = {
        ("m.py", 9): [mutant(9, 0)],
        ("a.py", 3): [mutant(3, 0, "a.py"), mutant(3, 1, "a.py")],
        ("m.py", 2): [mutant(2, 0), mutant(2, 1), mutant(2, 2)],
    }
    chosen, untried = pick(per_line, 4)
    assert ([(m.path, m.line, m.after) for m in chosen], untried) == (
        [("a.py", 3, "mutant 0"), ("m.py", 2, "mutant 0"), ("m.py", 9, "mutant 0"), ("a.py", 3, "mutant 1")],
        2,
    )


def test_pick_takes_at_most_costly_cap_of_the_costly_lines_and_fills_the_cap_with_the_others() -> None:
    per_line = {
        ("m.py", 1): [mutant(1, 0), mutant(1, 1), mutant(1, 2)],
        ("m.py", 2): [mutant(2, 0), mutant(2, 1)],
        ("m.py", 3): [mutant(3, 0), mutant(3, 1)],
    }
    chosen, untried = pick(per_line, 5, costly={("m.py", 1), ("m.py", 3)}, costly_cap=2)
    assert ([(m.line, m.after) for m in chosen], untried) == (
        [(1, "mutant 0"), (2, "mutant 0"), (3, "mutant 0"), (2, "mutant 1")],
        3,
    )
    assert pick(per_line, 5, costly={("m.py", 1)}, costly_cap=0)[0] == [
        mutant(2, 0),
        mutant(3, 0),
        mutant(2, 1),
        mutant(3, 1),
    ]


def test_pick_under_no_cap_takes_all_and_under_a_zero_cap_none() -> None:
    per_line = {("m.py", 1): [mutant(1, 0), mutant(1, 1)], ("m.py", 2): [mutant(2, 0)]}
    assert pick(per_line, 10) == ([mutant(1, 0), mutant(2, 0), mutant(1, 1)], 0)
    assert pick(per_line, 0) == ([], 3)
    assert pick({}, 20) == ([], 0)


def test_pick_does_not_depend_on_the_order_lines_were_given_in() -> None:
    lines = [(("m.py", n), [mutant(n, 0), mutant(n, 1)]) for n in (5, 1, 3)]
    assert pick(dict(lines), 4) == pick(dict(reversed(lines)), 4)


def test_the_diff_line_names_the_place_and_both_versions() -> None:
    [compare, removed] = mutate("src/pkg/mod.py", "ok = a < b\n", frozenset({1}))
    assert (compare.diff_line(), removed.diff_line()) == (
        "src/pkg/mod.py:1: ok = a < b  ->  ok = a <= b",
        "src/pkg/mod.py:1: ok = a < b  ->  (removed)",
    )


def test_python_declares_mutation_and_node_and_go_do_not() -> None:
    python = load_profile(Snapshot.of_files({"pyproject.toml": "", "tests/test_a.py": "def test_a():\n    pass\n"}))
    node = load_profile(
        Snapshot.of_files({"package.json": '{"scripts": {"test": "vitest run"}}', "a.test.js": "test('a', () => {})\n"})
    )
    go = load_profile(Snapshot.of_files({"go.mod": "module x\n", "a_test.go": "package x\n"}))
    assert (python.lines.mutate, node.lines.mutate, go.lines.mutate) == (mutate, None, None)
    assert mutation.OPERATORS == ("compare", "boolean", "negate", "return-none", "arith", "constant", "remove")


def enclosing_end(tree: ast.Module, line: int) -> int:
    """The last line of the statements that hold `line`."""
    return max(
        node.end_lineno or node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno)
    )


@given(modules(), st.data())
def test_every_mutant_of_a_generated_module_parses_differs_and_changes_only_its_statement(
    source: str, data: st.DataObject
) -> None:
    original = source.encode()
    old = original.splitlines(keepends=True)
    lines = data.draw(st.sets(st.integers(1, len(old))).map(frozenset) | st.just(frozenset(range(1, len(old) + 1))))
    tree = ast.parse(source)
    for m in mutate("m.py", source, lines):
        new = m.source.splitlines(keepends=True)
        tail = old[enclosing_end(tree, m.line) :]
        assert ast.dump(ast.parse(m.source)) != ast.dump(tree)
        assert (m.line in lines, new[: m.line - 1], new[len(new) - len(tail) :]) == (True, old[: m.line - 1], tail)
        stripped = [line.decode().strip() for line in old[m.line - 1 :]]
        assert m.before in {" ".join(filter(None, stripped[:n])) for n in range(1, len(stripped) + 1)}


@given(
    st.one_of(
        st.text(),
        st.binary().map(lambda b: b.decode("utf-8", "surrogateescape")),
        st.binary().map(lambda b: b.decode("latin-1")),
        st.lists(
            st.sampled_from(
                [
                    "if a<b:",
                    "\n",
                    "    ",
                    "return 1",
                    "x = 'é'",
                    "(",
                    ")",
                    ";",
                    "#",
                    "\r",
                    "\\",
                    "f'{a}'",
                    " and ",
                    "not ",
                ]
            )
        ).map("".join),
    )
)
def test_mutate_never_raises_and_what_it_gives_parses(text: str) -> None:
    for m in mutate("m.py", text, everywhere(text)):
        assert (isinstance(ast.parse(m.source), ast.Module), m.source != text.encode()) == (True, True)


GRADES = '''\
def grade(score):
    """Why: the passing mark is 50, and 90 and up is an A."""
    if score >= 90:
        return "A"
    if score >= 50 and score <= 89:
        return "pass"
    return "fail"
'''


def run(source: bytes | str, *scores: int) -> list[Any]:
    module = ModuleType("graded")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(source, "graded.py", "exec"), module.__dict__)  # noqa: S102 - the sample's own text
    return [module.grade(score) for score in scores]


def test_a_mutant_changes_what_the_code_returns() -> None:
    scores = (0, 49, 50, 89, 90, 100)
    assert run(GRADES, *scores) == ["fail", "fail", "pass", "pass", "A", "A"]
    found = {m.after: run(m.source, *scores) for m in mutate("grades.py", GRADES, frozenset({3, 5}))}
    assert found == {
        "if score > 90:": ["fail", "fail", "pass", "pass", "fail", "A"],
        "if not score >= 90:": ["A", "A", "A", "A", "fail", "fail"],
        "if score >= 91:": ["fail", "fail", "pass", "pass", "fail", "A"],
        "if score > 50 and score <= 89:": ["fail", "fail", "fail", "pass", "A", "A"],
        "if score >= 50 and score < 89:": ["fail", "fail", "pass", "fail", "A", "A"],
        "if score >= 50 or score <= 89:": ["pass", "pass", "pass", "pass", "A", "A"],
        "if not (score >= 50 and score <= 89):": ["pass", "pass", "fail", "fail", "A", "A"],
        "if score >= 51 and score <= 89:": ["fail", "fail", "fail", "pass", "A", "A"],
        "if score >= 50 and score <= 90:": ["fail", "fail", "pass", "pass", "A", "A"],  # the one equivalent
    }
