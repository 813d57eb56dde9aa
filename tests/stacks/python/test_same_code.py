"""A statement only reformatted is no added code for the diff rules; moved
into another function, or changed in any way, it is."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gatetui.git.snapshot import Snapshot
from gatetui.stacks.python.hooks import scan_hooks
from gatetui.stacks.python.same_code import restated

BASE = """import traceback


def _trim_arity(func):
    global _call_line
    _call_line = (_call_line or traceback.extract_stack(limit=2)[-1])
    return func


def helper():
    return 1
"""


def reaches(before: str, after: str) -> list[str]:
    scan = scan_hooks(
        Snapshot.of_files({"lib/core.py": before.encode()}),
        Snapshot.of_files({"lib/core.py": after.encode()}),
        lambda path: path.startswith("tests/"),
    )
    return [f"{f.path} {f.what.split(':')[0]}" for f in (*scan.reaches, *scan.skips)]


def test_a_statement_only_rewrapped_is_not_named() -> None:
    """pyparsing 3.1.4 -> 3.2.0: parentheses dropped around an old line."""
    head = BASE.replace(
        "(_call_line or traceback.extract_stack(limit=2)[-1])", "_call_line or traceback.extract_stack(limit=2)[-1]"
    )
    assert head != BASE
    assert reaches(BASE, head) == []


def test_the_same_statement_moved_into_another_function_is_named() -> None:
    head = BASE.replace(
        "def helper():\n    return 1\n",
        "def helper():\n    global _call_line\n"
        "    _call_line = _call_line or traceback.extract_stack(limit=2)[-1]\n    return 1\n",
    )
    assert reaches(BASE, head) == ["lib/core.py:12 library code looks at who calls it"]


def test_a_changed_statement_in_the_same_place_is_named() -> None:
    head = BASE.replace("extract_stack(limit=2)", "extract_stack(limit=5)")
    assert reaches(BASE, head) == ["lib/core.py:6 library code looks at who calls it"]


def test_skips_joined_onto_one_line_are_not_named_and_a_new_one_is() -> None:
    """idna 3.8 -> 3.9: a reformat joined multi-line `raise SkipTest(...)`."""
    before = (
        "import unittest\n\n\ndef need_data():\n    if not DATA:\n        raise unittest.SkipTest(\n"
        '            "no data"\n        )\n'
    )
    joined = 'import unittest\n\n\ndef need_data():\n    if not DATA:\n        raise unittest.SkipTest("no data")\n'
    assert reaches(before, joined) == []
    added = joined + '\n\ndef need_more():\n    raise unittest.SkipTest("no more")\n'
    assert reaches(before, added) == ["lib/core.py:10 skip raised from library code"]


def test_a_block_whose_body_changed_keeps_its_header_old() -> None:
    before = "def f(x):\n    if x:\n        return 1\n    return 2\n"
    after = "def f(x):\n    if x:\n        return 3\n    return 2\n"
    is_old = restated(before, after)
    assert [is_old(n) for n in (1, 2, 3, 4)] == [True, True, False, True]


def test_a_file_that_does_not_parse_has_nothing_old() -> None:
    is_old = restated(BASE, BASE + "def broken(:\n")
    assert [is_old(n) for n in range(1, 12)] == [False] * 11


@given(st.text(max_size=300), st.text(max_size=300), st.integers(0, 40))
def test_any_text_gets_an_answer(before: str, after: str, line: int) -> None:
    assert restated(before, after)(line) in (True, False)


@given(st.sampled_from([BASE, "x = 1\n", "class A:\n    def f(self):\n        return eval('1')\n"]))
def test_an_unchanged_file_is_old_on_every_statement_line(source: str) -> None:
    is_old = restated(source, source)
    code_lines = [n for n, line in enumerate(source.splitlines(), 1) if line.strip()]
    assert all(is_old(n) for n in code_lines)
