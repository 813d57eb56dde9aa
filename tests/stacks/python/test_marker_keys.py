"""A marker on an added line is new only if base's file did not hold it:
the diff half of `no_new_skips` after a formatter rewrote old skips (idna
3.8 -> 3.9, in make eval), and the cheats that must stay caught."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatetui.gate.diff.scan import scan_changes
from gatetui.stacks.python.marker_keys import python_marker_keys
from tests.support.diffs import FAST, JS, PY, TRICKY, kinds, modify, py_sources

IDNA_38 = """import unittest


class TestIdnaTest(unittest.TestCase):
    def runTest(self):
        try:
            output = decode(source)
        except (IDNAError, UnicodeError):
            if unicode_version_too_old():
                raise unittest.SkipTest("Test requires support for a newer"
                    " version of Unicode than this Python supports")
            if status == '[]':
                raise
"""
# ruff format: the statement joined onto one line, quotes made double
IDNA_39 = """import unittest


class TestIdnaTest(unittest.TestCase):
    def runTest(self):
        try:
            output = decode(source)
        except (IDNAError, UnicodeError):
            if unicode_version_too_old():
                raise unittest.SkipTest("Test requires support for a newer" " version of Unicode than this Python supports")
            if status == "[]":
                raise
"""


def test_a_skip_statement_a_formatter_joined_onto_one_line_is_not_new() -> None:
    """idna 3.9: the joined line is added, the skip on it is base's."""
    assert scan_changes([modify(PY, IDNA_38, IDNA_39)]).markers == ()


def test_a_genuine_skip_beside_a_reformat_is_still_caught() -> None:
    head = IDNA_39 + '\n    def test_new(self):\n        self.skipTest("later")\n'
    assert kinds(scan_changes([modify(PY, IDNA_38, head)])) == [(15, "skip")]


def test_a_second_copy_of_an_old_skip_in_the_same_test_is_new() -> None:
    """The multiset: head holds two where base held one."""
    line = '                raise unittest.SkipTest("Test requires support for a newer" " version of Unicode than this Python supports")\n'
    head = IDNA_39.replace("            if status", "            if other():\n" + line + "            if status")
    assert kinds(scan_changes([modify(PY, IDNA_38, head)])) == [(12, "skip")]


MOVED_BASE = """import pytest


def test_a():
    pytest.skip("slow")
    assert slow()


def test_b():
    assert fast()
"""
MOVED_HEAD = """import pytest


def test_a():
    assert slow()


def test_b():
    pytest.skip("slow")
    assert fast()
"""


def test_a_skip_moved_to_another_test_is_new() -> None:
    """Same statement, same file, but it now switches off test_b: new."""
    assert kinds(scan_changes([modify(PY, MOVED_BASE, MOVED_HEAD)])) == [(9, "skip")]


def test_a_skip_moved_up_its_test_above_the_assertion_it_dodges_is_new() -> None:
    """Same statement, same test, but it now runs before `assert slow()`."""
    base = MOVED_BASE.replace(
        '    pytest.skip("slow")\n    assert slow()\n', '    assert slow()\n    pytest.skip("slow")\n'
    )
    assert kinds(scan_changes([modify(PY, base, MOVED_BASE)])) == [(5, "skip")]


def test_a_decorator_moved_to_another_test_is_new() -> None:
    base = "import pytest\n\n\n@pytest.mark.xfail\ndef test_a():\n    pass\n\n\ndef test_b():\n    pass\n"
    head = "import pytest\n\n\ndef test_a():\n    pass\n\n\n@pytest.mark.xfail\ndef test_b():\n    pass\n"
    assert kinds(scan_changes([modify(PY, base, head)])) == [(8, "xfail")]


CONDITIONAL = """import sys

import pytest


def test_a():
    if sys.platform == "win32": pytest.skip("no fork")
    assert fork()
"""


def test_a_one_line_if_split_by_a_formatter_keeps_its_skip() -> None:
    head = CONDITIONAL.replace(
        '    if sys.platform == "win32": pytest.skip', '    if sys.platform == "win32":\n        pytest.skip'
    )
    assert scan_changes([modify(PY, CONDITIONAL, head)]).markers == ()


def test_a_skip_whose_condition_was_made_true_is_new() -> None:
    head = CONDITIONAL.replace('sys.platform == "win32"', "True")
    assert kinds(scan_changes([modify(PY, CONDITIONAL, head)])) == [(7, "skip")]


def test_a_changed_reason_on_a_reformatted_line_is_new() -> None:
    head = IDNA_39.replace("Test requires support", "Flaky, skipped for now")
    assert kinds(scan_changes([modify(PY, IDNA_38, head)])) == [(10, "skip")]


PARAMS_ONE_LINE = """import pytest


@pytest.mark.parametrize("n", [1, pytest.param(2, marks=pytest.mark.xfail), pytest.param(3, marks=pytest.mark.xfail)])
def test_n(n):
    assert n
"""
PARAMS_EXPLODED = """import pytest


@pytest.mark.parametrize(
    "n",
    [
        1,
        pytest.param(2, marks=pytest.mark.xfail),
        pytest.param(3, marks=pytest.mark.xfail),
    ],
)
def test_n(n):
    assert n
"""


def test_xfail_cases_a_formatter_spread_over_lines_are_not_new() -> None:
    """Two marks of one decorator: one statement, counted once each side."""
    assert scan_changes([modify(PY, PARAMS_ONE_LINE, PARAMS_EXPLODED)]).markers == ()


def test_an_xfail_case_added_to_a_reformatted_parametrize_is_new() -> None:
    head = PARAMS_EXPLODED.replace("    ],\n", "        pytest.param(4, marks=pytest.mark.xfail),\n    ],\n")
    assert kinds(scan_changes([modify(PY, PARAMS_ONE_LINE, head)])) == [(8, "xfail"), (9, "xfail"), (10, "xfail")]


def test_when_either_version_does_not_parse_every_marker_on_an_added_line_counts() -> None:
    broken = IDNA_39 + "def oops(:\n"
    assert kinds(scan_changes([modify(PY, IDNA_38, broken)])) == [(10, "skip")]
    assert kinds(scan_changes([modify(PY, IDNA_38 + "def oops(:\n", IDNA_39)])) == [(10, "skip")]


def test_a_language_without_keys_counts_every_marker_on_an_added_line() -> None:
    base = "it.skip('a', () => {\n  expect(1).toBe(1)\n})\n"
    head = "it.skip('a', () => { expect(1).toBe(1) })\n"
    assert kinds(scan_changes([modify(JS, base, head)])) == [(1, "skip")]


def test_keys_name_the_test_the_condition_and_the_statement() -> None:
    """kind, test, one digest per condition (with its branch), the statement's digest."""
    keys = python_marker_keys(CONDITIONAL)
    assert keys is not None and [(k.line, k.kind, k.statement) for k in keys] == [(7, "skip", (7, 32))]
    kind, scope, place, condition, statement = keys[0].key.split("\0")
    assert (kind, scope, place) == ("skip", "test_a", "body[0]")
    assert condition.endswith(" body[0]") and len(condition) == 32 + len(" body[0]") and len(statement) == 32
    two_lines = python_marker_keys(CONDITIONAL.replace(": pytest.skip", ":\n        pytest.skip"))
    other_branch = python_marker_keys(CONDITIONAL.replace(": pytest.skip", ":\n        pass\n    else: pytest.skip"))
    assert two_lines is not None and [k.key for k in two_lines] == [keys[0].key]
    assert other_branch is not None and other_branch[0].key.split("\0")[3] == condition.replace(" body", " orelse")
    assert python_marker_keys("def test_x(:\n    pytest.skip()\n") is None


@FAST
@given(source=py_sources(broken=False))
def test_property_a_rewrite_that_keeps_the_syntax_tree_adds_no_marker(source: str) -> None:
    """Any layout of the same code (ast.unparse: quotes, wrapping, comments
    and blank lines all changed) adds no marker, either way."""
    rewritten = ast.unparse(ast.parse(source)) + "\n"
    assert scan_changes([modify(PY, source, rewritten)]).markers == ()
    assert scan_changes([modify(PY, rewritten, source)]).markers == ()


@FAST
@given(source=py_sources(broken=False), where=st.sampled_from(["decorator", "call"]))
def test_property_a_new_test_with_a_skip_is_caught_through_any_rewrite(source: str, where: str) -> None:
    skip = {
        "decorator": "@pytest.mark.skip\ndef test_added_z():\n    pass\n",
        "call": "def test_added_z():\n    pytest.skip('z')\n",
    }[where]
    rewritten = ast.unparse(ast.parse(source)) + "\n\n\n" + skip
    assert [m.kind for m in scan_changes([modify(PY, source, rewritten)]).markers] == ["skip"]


@FAST
@given(text=st.one_of(st.text(max_size=300), TRICKY, py_sources()))
def test_property_keys_never_raise(text: str) -> None:
    keys = python_marker_keys(text)
    assert keys is None or all(k.key.startswith(k.kind + "\0") for k in keys)


@pytest.mark.parametrize("text", ["", "x = 1\n", "\ufeffimport pytest\r\n@pytest.mark.skip\r\ndef test_a(): pass\r\n"])
def test_keys_of_files_with_few_or_no_markers(text: str) -> None:
    keys = python_marker_keys(text)
    assert keys is not None and [(k.line, k.kind) for k in keys] == ([(2, "skip")] if "skip" in text else [])
