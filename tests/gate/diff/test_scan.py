"""The diff scanner behind the `tests_kept` and `no_new_skips` checks.

Each test names what it protects. Both checks fail a change, so a marker
or a definition found where there is none (in a string, a comment, another
object's `.skip(`) is as harmful as one missed.
"""

from __future__ import annotations

import ast
import json
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatetui.gate.diff import scan as ds
from gatetui.gate.diff.scan import DiffScan, Marker, scan_changes
from gatetui.git.changes import FileChange
from gatetui.pyparse import parse_python
from gatetui.stacks import codeview, registry
from gatetui.stacks.node import jsview
from gatetui.stacks.node import tests as js_tests
from gatetui.stacks.python import tests as python_tests
from tests.support.diffs import FAST, JS, PY, TRICKY, _assemble, kinds, modify, py_sources


def add(path: str, new: str) -> FileChange:
    return FileChange("add", None, path, None, new.encode())


def delete(path: str, old: str) -> FileChange:
    return FileChange("delete", path, None, old.encode(), None)


def rename(old_path: str, new_path: str, old: str, new: str) -> FileChange:
    return FileChange("rename", old_path, new_path, old.encode(), new.encode())


def names(defs: tuple[ds.TestDef, ...] | list[ds.TestDef]) -> list[str]:
    return [d.name for d in defs]


PY_BASE = "import pytest\nimport unittest\n\n\ndef test_base():\n    assert True\n"
PY_BASE_LINES = PY_BASE.count("\n")  # the appended snippet starts on line 7


# --------------------------------------------------------------------------
# Python markers
# --------------------------------------------------------------------------

# (snippet appended to PY_BASE, line of the marker within it, kind)
PY_MARKER_CASES = [
    ('@pytest.mark.skip(reason="flaky")\ndef test_b():\n    pass\n', 1, "skip"),
    ('@pytest.mark.skipif(True, reason="x")\ndef test_b():\n    pass\n', 1, "skip"),
    ("@pytest.mark.xfail(strict=True)\ndef test_b():\n    pass\n", 1, "xfail"),
    ('def test_b():\n    pytest.skip("later")\n', 2, "skip"),
    ('def test_b():\n    np = pytest.importorskip("numpy")\n', 2, "skip"),
    ('def test_b():\n    pytest.xfail("known bug")\n', 2, "xfail"),
    ('class TestB(unittest.TestCase):\n    @unittest.skip("r")\n    def test_b(self):\n        pass\n', 2, "skip"),
    ('@unittest.skipIf(True, "r")\ndef test_b():\n    pass\n', 1, "skip"),
    ('@unittest.skipUnless(False, "r")\ndef test_b():\n    pass\n', 1, "skip"),
    ('@skip("r")\ndef test_b():\n    pass\n', 1, "skip"),
    ('@skipIf(True, "r")\ndef test_b():\n    pass\n', 1, "skip"),
    ('@skipUnless(False, "r")\ndef test_b():\n    pass\n', 1, "skip"),
    ("@unittest.expectedFailure\ndef test_b():\n    pass\n", 1, "xfail"),
    ('class TestB(unittest.TestCase):\n    def test_b(self):\n        self.skipTest("r")\n', 3, "skip"),
    ('pytestmark = pytest.mark.skip(reason="all")\n', 1, "skip"),
    ("pytestmark = [pytest.mark.skipif(True, reason='x')]\n", 1, "skip"),
    (
        '@pytest.mark.parametrize("n", [\n    1,\n'
        "    pytest.param(2, marks=pytest.mark.xfail),\n])\n"
        "def test_b(n):\n    pass\n",
        3,
        "xfail",
    ),
    ('def test_b():\n    raise unittest.SkipTest("r")\n', 2, "skip"),
    ('import pytest as pt\n\n\n@pt.mark.skip(reason="x")\ndef test_b():\n    pass\n', 4, "skip"),
    ("from pytest import mark\n\n\n@mark.xfail\ndef test_b():\n    pass\n", 4, "xfail"),
    ('from unittest import skip as sk\n\n\n@sk("r")\ndef test_b():\n    pass\n', 4, "skip"),
]


@pytest.mark.parametrize(("snippet", "offset", "kind"), PY_MARKER_CASES)
def test_every_python_marker_kind_on_an_added_line_is_reported(snippet: str, offset: int, kind: str) -> None:
    """Protects `no_new_skips` for each Python way of switching a test off."""
    scan = scan_changes([modify(PY, PY_BASE, PY_BASE + snippet)])
    line = PY_BASE_LINES + offset
    expected_text = snippet.split("\n")[offset - 1].strip()
    assert scan.markers == (Marker(PY, line, kind, expected_text),)


@pytest.mark.parametrize(
    "snippet",
    [
        'note = "@pytest.mark.skip(reason=1)"\n',
        "note = '''\n@pytest.mark.xfail\npytest.skip(\"x\")\n'''\n",
        "# @pytest.mark.skip\n# pytest.skip('later')\n",
        'def test_b():\n    """pytest.skip("not really") and @unittest.skip"""\n    assert True\n',
        'raw = rb"pytest.mark.skip" + f"{x} pytest.skip()"\n',
        "def test_b():\n    assert 1  # self.skipTest('no')\n",
    ],
)
def test_python_marker_text_in_strings_and_comments_is_ignored(snippet: str) -> None:
    """Protects against failing a change over prose that mentions a marker."""
    assert scan_changes([modify(PY, PY_BASE, PY_BASE + snippet)]).markers == ()


@pytest.mark.parametrize(
    "snippet",
    [
        "def test_b():\n    obj.skip(3)\n",
        "def test_b():\n    skip = True\n    if skip:\n        pass\n",
        "def test_b():\n    make().skip()\n",
        "def test_b():\n    x = mark.skip\n",  # `mark` not imported from pytest
        "def test_b():\n    pytest.mark\n",
    ],
)
def test_python_skip_words_that_are_not_markers_are_ignored(snippet: str) -> None:
    """Protects against reading any `skip` in code as a skip marker."""
    assert scan_changes([modify(PY, PY_BASE, PY_BASE + snippet)]).markers == ()


def test_marker_on_an_unchanged_line_is_not_new() -> None:
    """Protects `no_new_skips` from blaming a change for an old skip."""
    old = PY_BASE + '\n\n@pytest.mark.skip(reason="old")\ndef test_old():\n    pass\n'
    new = old.replace("assert True", "assert 1 == 1") + "\n\ndef test_new():\n    pass\n"
    scan = scan_changes([modify(PY, old, new)])
    assert scan.markers == ()
    assert names(scan.added) == ["test_new"]


def test_marker_on_an_edited_line_counts_as_added() -> None:
    """Protects the rule that a touched marker line is an added line."""
    old = PY_BASE + '\n\n@pytest.mark.skip(reason="a")\ndef test_old():\n    pass\n'
    new = old.replace('reason="a"', 'reason="b"')
    scan = scan_changes([modify(PY, old, new)])
    assert kinds(scan) == [(9, "skip")]


def test_two_markers_of_one_kind_on_a_line_report_once() -> None:
    """Protects details from listing the same line twice for one reason."""
    hits = python_tests.python_markers("x = [pytest.mark.skip, pytest.mark.skipif(1, reason='r')]\n")
    assert hits == [(1, "skip", "x = [pytest.mark.skip, pytest.mark.skipif(1, reason='r')]")]


def test_added_file_brings_every_marker_and_deleted_file_none() -> None:
    """Protects: an added file is all new lines; a deleted one adds nothing."""
    source = PY_BASE + "\n\n@pytest.mark.xfail\ndef test_x():\n    pass\n"
    added = scan_changes([add(PY, source)])
    assert kinds(added) == [(9, "xfail")]
    assert names(added.added) == ["test_base", "test_x"]
    deleted = scan_changes([delete(PY, source)])
    assert deleted.markers == ()
    assert names(deleted.removed) == ["test_base", "test_x"]
    assert deleted.tests_kept_ok() is False


# --------------------------------------------------------------------------
# Python definitions
# --------------------------------------------------------------------------

PY_DEFS = """import pytest


def test_a():
    pass


async def test_async():
    await thing()


def helper():
    def test_nested():
        pass
    class TestInside:
        def test_inside(self):
            pass


class TestGroup:
    def test_method(self):
        pass

    async def test_async_method(self):
        pass

    def helper(self):
        pass

    class TestInner:
        def test_deep(self):
            pass


if True:
    def test_in_if():
        pass


def testcamel():
    pass
"""


def test_python_defs_name_methods_by_class_and_skip_nested_functions() -> None:
    """Protects the names the tests_kept detail shows, and what counts."""
    defs = python_tests.python_test_defs(PY, PY_DEFS)
    assert [(d.name, d.line) for d in defs] == [
        ("test_a", 4),
        ("test_async", 8),
        ("TestGroup::test_method", 21),
        ("TestGroup::test_async_method", 24),
        ("TestGroup::TestInner::test_deep", 31),
        ("test_in_if", 36),
        ("testcamel", 40),
    ]


def test_removed_and_added_counts_with_methods_and_async_defs() -> None:
    """Protects `tests_kept`: removals and additions pair up per file."""
    new = (
        PY_DEFS.replace("    async def test_async_method(self):\n        pass\n", "").replace(
            "def test_a():", "def test_a_renamed():"
        )
        + "\n\nasync def test_more():\n    pass\n"
    )
    scan = scan_changes([modify(PY, PY_DEFS, new)])
    assert names(scan.removed) == ["test_a", "TestGroup::test_async_method"]
    assert names(scan.added) == ["test_a_renamed", "test_more"]
    assert scan.tests_kept_ok() is True


def test_redefinition_counts_as_a_multiset() -> None:
    """Protects: two `test_a` in old and one in new is one removal."""
    old = "def test_a():\n    pass\n\n\ndef test_a():\n    pass\n"
    new = "def test_a():\n    pass\n"
    scan = scan_changes([modify(PY, old, new)])
    assert [(d.name, d.line) for d in scan.removed] == [("test_a", 5)]
    assert scan.added == ()
    assert scan.tests_kept_detail() == f"1 removed, 0 added: {PY}::test_a"


def test_renamed_file_keeps_its_tests() -> None:
    """Protects: moving a test file is not deleting its tests."""
    pure = scan_changes([rename("tests/test_old.py", "tests/test_new.py", PY_DEFS, PY_DEFS)])
    assert (pure.removed, pure.added, pure.markers, pure.files_scanned) == ((), (), (), 1)
    edited = scan_changes(
        [rename("tests/test_old.py", "tests/test_new.py", PY_DEFS, PY_DEFS + "\n\ndef test_extra():\n    pass\n")]
    )
    assert edited.removed == ()
    assert [d.qualified for d in edited.added] == ["tests/test_new.py::test_extra"]


def test_test_moved_between_files_is_one_removed_one_added() -> None:
    """Protects the documented cost of a move without a rename."""
    scan = scan_changes(
        [
            modify("tests/test_a.py", "def test_x():\n    pass\n", "import os\n"),
            modify("tests/test_b.py", "import os\n", "def test_x():\n    pass\n"),
        ]
    )
    assert [d.qualified for d in scan.removed] == ["tests/test_a.py::test_x"]
    assert [d.qualified for d in scan.added] == ["tests/test_b.py::test_x"]
    assert scan.tests_kept_ok() is True


BROKEN_OLD = "def test_a():\n    assert 1\n\n\ndef test_b():\n    assert 2\n"
BROKEN_NEW = (
    "def test_a():\n    assert (1\n\n\n"  # unclosed bracket
    "def test_b():\n    assert 2\n\n\n"
    "@pytest.mark.skip\ndef test_c(:\n    pass\n"  # and a bad signature
)


def test_unparseable_python_file_is_still_scanned() -> None:
    """Protects both checks on agent code that is mid-edit and broken."""
    assert parse_python(BROKEN_NEW) is None  # the premise: ast gives up
    scan = scan_changes([modify(PY, BROKEN_OLD, BROKEN_NEW)])
    assert scan.removed == ()
    assert [(d.name, d.line) for d in scan.added] == [("test_c", 10)]
    assert kinds(scan) == [(9, "skip")]


def test_unparseable_file_still_ignores_strings_and_nesting() -> None:
    """Protects the fallback from counting defs in strings or in functions."""
    source = (
        "class TestA:\n    def test_one(self):\n"
        "        x = '''\ndef test_fake():\n'''\n"
        "    def test_two(self):\n"
        "        def test_nested():\n            pass\n"
        "        y = (\n"  # never closed: the file does not parse
        "def test_three():\n    pass\n"
    )
    assert names(python_tests.python_test_defs(PY, source)) == ["TestA::test_one", "TestA::test_two", "test_three"]


# --------------------------------------------------------------------------
# JS/TS markers and definitions
# --------------------------------------------------------------------------

JS_BASE = "import { describe, it, test, expect } from 'vitest';\n\nit('base', () => {});\n"
JS_BASE_LINES = JS_BASE.count("\n")  # the appended snippet starts on line 4

JS_MARKER_CASES = [
    ("it.only('x', () => {});\n", 1, "focus"),
    ("test.only('x', () => {});\n", 1, "focus"),
    ("describe.only('s', () => {\n  it('x', () => {});\n});\n", 1, "focus"),
    ("suite.only('s', () => {});\n", 1, "focus"),
    ("context.only('s', () => {});\n", 1, "focus"),
    ("it.skip('x', () => {});\n", 1, "skip"),
    ("test.todo('later');\n", 1, "skip"),
    ("describe.skip('s', () => {});\n", 1, "skip"),
    ("describe.skip.each([1, 2])('s %i', () => {});\n", 1, "skip"),
    ("test.skipIf(process.env.CI)('x', () => {});\n", 1, "skip"),
    ("test.runIf(isLinux)('x', () => {});\n", 1, "skip"),
    ("xit('x', () => {});\n", 1, "skip"),
    ("xtest('x', () => {});\n", 1, "skip"),
    ("xdescribe('s', () => {});\n", 1, "skip"),
    ("fit('x', () => {});\n", 1, "focus"),
    ("fdescribe('s', () => {});\n", 1, "focus"),
    ("test('x', { skip: true }, () => {});\n", 1, "skip"),
    ("test('x', { only: true }, () => {});\n", 1, "focus"),
    ("describe('s', { todo: 'later' }, () => {});\n", 1, "skip"),
    ("test('x', {\n  timeout: 5,\n  skip: process.platform === 'win32',\n}, () => {});\n", 3, "skip"),
    ("test('x', (t) => {\n  t.skip();\n});\n", 2, "skip"),
    ("test('x', async (t) => {\n  await t.test('sub', { todo: true }, () => {});\n});\n", 2, "skip"),
    ("it('x', function () {\n  this.skip();\n});\n", 2, "skip"),
]


@pytest.mark.parametrize(("snippet", "offset", "kind"), JS_MARKER_CASES)
def test_every_js_marker_kind_on_an_added_line_is_reported(snippet: str, offset: int, kind: str) -> None:
    """Protects `no_new_skips` for each JS/TS way to skip or focus tests."""
    scan = scan_changes([modify(JS, JS_BASE, JS_BASE + snippet)])
    line = JS_BASE_LINES + offset
    expected_text = snippet.split("\n")[offset - 1].strip()
    assert scan.markers == (Marker(JS, line, kind, expected_text),)


@pytest.mark.parametrize(
    "snippet",
    [
        "// it.only('x', () => {});\n",
        "/* xit('x', () => {});\n   describe.skip('y') */\n",
        "const s = 'it.only(\"x\")';\n",
        "const s = \"test.skip('x')\";\n",
        "const s = `fit('x') ${value} describe.only('y')`;\n",
        "const s = `a ${ {k: 'it.only(1)'}.k } b ${ `c ${d} xit('n')` }`;\n",
        "const r = /it.only\\('x'\\)'/;\n",
        "stream.skip(3);\nlist.only(1);\nrunner.todo();\n",
        "test('x', () => {\n  const opts = { skip: true };\n});\n",
        "test('x', { skip: false }, () => {});\n",
        "configure({ only: true });\n",
    ],
)
def test_js_non_markers_are_ignored(snippet: str) -> None:
    """Protects against markers read from strings, comments, regexes,
    templates, data objects, or `.skip(` on other objects."""
    assert scan_changes([modify(JS, JS_BASE, JS_BASE + snippet)]).markers == ()


def test_js_code_after_templates_regexes_and_divisions_is_still_read() -> None:
    """Protects the lexer from swallowing real code after a tricky literal."""
    source = (
        "const a = `x ${ `y ${ {z: 1}.z }` } w`;\n"
        "const b = n / 2; const c = m / 3;\n"
        "const d = s.replace(/['\"`]/g, '');\n"
        "it.only('real', () => {});\n"
    )
    assert js_tests.js_markers(source) == [(4, "focus", "it.only('real', () => {});")]
    assert names(js_tests.js_test_defs(JS, source)) == ["real"]


# Scanner input, not a test of this project: the `it.skip` inside must be
# counted as a definition (and as a marker when added).
JS_DEFS = """describe('math', () => {
  it('adds', () => {
    expect(/a+/.test('aaa')).toBe(true);
    expect(pattern.test('x')).toBe(false);
  });
  describe("nested", () => {
    test.concurrent(`multiplies`, async () => {});
    it.each([[1, 2]])('pairs %i', (a, b) => {});
  });
  it.skip('skipped but defined', () => {});
  it.todo('only a placeholder');
});
test('top level', () => {});
obj.test('not a test', 1);
function test_helper() { return re.test('x'); }
"""


def test_js_defs_carry_describe_titles_and_skip_method_calls() -> None:
    """Protects `tests_kept` for JS: what is a test, and its name."""
    defs = js_tests.js_test_defs(JS, JS_DEFS)
    assert [(d.name, d.line) for d in defs] == [
        ("math > adds", 2),
        ("math > nested > multiplies", 7),
        ("math > nested > pairs %i", 8),
        ("math > skipped but defined", 10),
        ("top level", 13),
    ]


def test_js_removed_test_is_reported_and_only_is_focus() -> None:
    """Protects both checks on the common JS edit: delete one, focus one."""
    new = JS_DEFS.replace("  it('adds', () => {", "  it.only('adds', () => {").replace(
        "test('top level', () => {});\n", ""
    )
    scan = scan_changes([modify(JS, JS_DEFS, new)])
    assert names(scan.removed) == ["top level"]
    assert scan.added == ()
    assert kinds(scan) == [(2, "focus")]
    assert scan.tests_kept_ok() is False


# --------------------------------------------------------------------------
# Which files are read
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/test_x.py", True),
        ("test_x.py", True),
        ("pkg/x_test.py", True),
        ("pkg/conftest.py", True),
        ("app/tests.py", True),  # Django's convention
        ("pkg/test/helpers.py", True),
        ("pkg/tests/helpers.py", True),
        ("pkg/helpers.py", False),
        ("pkg/testing.py", False),
        ("src/add.test.js", True),
        ("src/add.spec.tsx", True),
        ("src/__tests__/add.ts", True),
        ("test/add.mjs", True),
        ("src/add.ts", False),
        ("src/latest.js", False),
        ("tests/data.json", False),
        ("tests/README.md", False),
    ],
)
def test_default_test_file_heuristic(path: str, expected: bool) -> None:
    """Protects which files the checks read by default."""
    assert registry.looks_like_test_file(path) is expected


def test_non_test_files_are_ignored() -> None:
    """Protects app code from being judged by test-file rules."""
    changes = [
        modify("src/app.py", "def test_x():\n    pass\n", "@pytest.mark.skip\ndef f():\n    pass\n"),
        modify("src/app.ts", "it('x', () => {});\n", "it.only('y', () => {});\n"),
        modify("tests/notes.md", "it('x')", "it.only('x')"),
    ]
    scan = scan_changes(changes)
    assert (scan.removed, scan.added, scan.markers, scan.files_scanned) == ((), (), (), 0)
    widened = scan_changes(changes[:1], is_test_file=lambda path: True)
    assert names(widened.removed) == ["test_x"]
    assert kinds(widened) == [(1, "skip")]


def test_renamed_into_a_test_directory_is_read() -> None:
    """Protects: either path being a test file is enough."""
    scan = scan_changes(
        [rename("src/checks.py", "tests/checks.py", "x = 1\n", "x = 1\n\n\ndef test_new():\n    pass\n")]
    )
    assert [d.qualified for d in scan.added] == ["tests/checks.py::test_new"]


def test_many_changed_files_are_scanned_with_exact_totals() -> None:
    """Protects the scale the gate promises: 5,000 changed files."""
    changes: list[FileChange] = []
    for k in range(5000):
        if k % 5:
            changes.append(modify(f"src/m{k}.py", "x = 1\n", "x = 2\n"))
        elif k % 2:
            old = f"def test_a{k}():\n    pass\n\n\ndef test_b{k}():\n    pass\n"
            new = old.replace(f"def test_b{k}", f"def test_c{k}")
            changes.append(modify(f"tests/test_{k}.py", old, new))
        else:
            old = f"describe('d{k}', () => {{\n  it('a', () => {{}});\n}});\n"
            changes.append(modify(f"src/m{k}.test.js", old, old.replace("it(", "it.only(")))
    scan = scan_changes(changes)
    assert (len(scan.removed), len(scan.added), len(scan.markers), scan.files_scanned) == (500, 500, 500, 1000)


# --------------------------------------------------------------------------
# Line diff and details
# --------------------------------------------------------------------------


def test_added_lines_exact_for_small_edits() -> None:
    """Protects which lines count as added: insertions and replacements."""
    assert ds.added_lines("a\nb\nc\n", "a\nx\nb\nc\ny\n") == {2, 5}
    assert ds.added_lines("a\nb\n", "a\nB\n") == {2}
    assert ds.added_lines("a\nb\n", "a\nb\n") == set()


def test_added_lines_stays_linear_on_huge_repetitive_files() -> None:
    """Protects against a quadratic line diff on a rewritten 20,000-line file."""
    old = ["}", ""] * 10_000
    new = ["changed-first", *old[1:10_000], "X", *old[10_000:19_999], "changed-last"]
    assert ds.added_lines("\n".join(old), "\n".join(new)) == {1, 10_001, 20_001}


def test_details_read_as_the_checks_show_them() -> None:
    """Protects the detail strings the gate displays."""
    removed = tuple(ds.TestDef("tests/test_x.py", f"test_{c}", i) for i, c in enumerate("abcdefg", 1))
    marker = Marker("tests/test_x.py", 3, "skip", "@pytest.mark.skip")
    scan = DiffScan(removed=removed, added=(), markers=(marker,), files_scanned=1)
    assert scan.tests_kept_detail(limit=2) == (
        "7 removed, 0 added: tests/test_x.py::test_a, tests/test_x.py::test_b, and 5 more"
    )
    assert scan.skips_detail() == "1 new marker: tests/test_x.py:3 skip: @pytest.mark.skip"
    assert scan.summary() == (
        "7 removed, 0 added: tests/test_x.py::test_a, tests/test_x.py::test_b, "
        "tests/test_x.py::test_c, tests/test_x.py::test_d, tests/test_x.py::test_e, "
        "and 2 more; 1 new marker: tests/test_x.py:3 skip: @pytest.mark.skip"
    )
    empty = DiffScan((), (), ())
    assert (empty.tests_kept_ok(), empty.markers) == (True, ())
    assert empty.summary() == "0 removed, 0 added; no new skip, xfail or focus markers"


def test_crlf_and_bom_files_keep_line_numbers() -> None:
    """Protects marker lines on Windows-edited files."""
    old = "\ufeffimport pytest\r\n\r\ndef test_a():\r\n    pass\r\n"
    new = old + "\r\n@pytest.mark.skip\r\ndef test_b():\r\n    pass\r\n"
    scan = scan_changes([modify(PY, old, new)])
    assert kinds(scan) == [(6, "skip")]
    assert [(d.name, d.line) for d in scan.added] == [("test_b", 7)]


# --------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------

JS_FRAGMENTS = [
    "it('t{n}', () => {{ expect(1).toBe(1); }});\n",
    'test("t{n}", async () => {{ await x(); }});\n',
    "describe('d{n}', () => {{\n  it('inner {n}', () => {{}});\n}});\n",
    "it.only('o{n}', () => {{}});\n",
    "test.skip(`s{n}`, () => {{}});\n",
    "const r{n} = /it\\.only\\(/.test('it.only(\"x\")');\n",
    "// it.only('c{n}')\n",
    'const s{n} = `xit("${{a}}") ${{ `it.only("n")` }}`;\n',
    "stream.skip({n});\n",
    "test('node{n}', {{ skip: true }}, () => {{}});\n",
    "const q{n} = a / b / c;\n",
    "xit('x{n}', () => {{}});\n",
    "/* describe.only('b{n}') */\n",
]
JS_BROKEN = [
    "it('open{n}', () => {{\n",
    "const u{n} = 'unterminated\n",
    "`open template {n}\n",
    "/* open comment {n}\n",
]


def js_sources() -> st.SearchStrategy[str]:
    pool = JS_FRAGMENTS + JS_BROKEN
    return st.lists(st.integers(0, len(pool) - 1), max_size=12).map(lambda p: _assemble(pool, p))


@FAST
@given(source=py_sources(), js=js_sources())
def test_property_an_unrelated_edit_finds_nothing(source: str, js: str) -> None:
    """Protects against noise: appending a comment line removes, adds and
    marks nothing, even when the file is broken and full of markers."""
    scan = scan_changes([modify(PY, source, source + "\n# appended\n"), modify(JS, js, js + "\n// appended\n")])
    assert (scan.removed, scan.added, scan.markers) == ((), (), ())


@FAST
@given(
    base=py_sources(broken=False),
    new_names=st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), min_size=1, max_size=8, unique=True),
)
def test_property_appending_n_tests_adds_exactly_n(base: str, new_names: list[str]) -> None:
    """Protects `tests_kept` counting: N new functions are N additions."""
    appended = "".join(f"\n\ndef test_{n}():\n    assert True\n" for n in new_names)
    scan = scan_changes([modify(PY, base, base + appended)])
    assert sorted(names(scan.added)) == sorted(f"test_{n}" for n in new_names)
    assert scan.removed == ()


PY_MARKER_LINES = [case[0].split("\n")[case[1] - 1].strip() for case in PY_MARKER_CASES]
JS_MARKER_LINES = [case[0].split("\n")[case[1] - 1].strip() for case in JS_MARKER_CASES]


@FAST
@given(
    line=st.sampled_from(PY_MARKER_LINES),
    wrap=st.sampled_from(["repr", "comment", "docstring"]),
    pad=st.text(alphabet=string.ascii_letters + " ", max_size=5),
)
def test_property_python_marker_in_string_or_comment_is_never_a_marker(line: str, wrap: str, pad: str) -> None:
    """Protects: any marker, once quoted or commented out, is text."""
    body = pad + line + pad
    wrapped = {
        "repr": f"x = {body!r}\n",
        "comment": f"# {body}\n",
        "docstring": f'def test_z():\n    """{body.replace(chr(34), chr(39))}"""\n',
    }[wrap]
    assert python_tests.python_markers(wrapped) == []
    assert scan_changes([modify(PY, PY_BASE, PY_BASE + wrapped)]).markers == ()


@FAST
@given(
    line=st.sampled_from(JS_MARKER_LINES),
    wrap=st.sampled_from(["json", "single", "line-comment", "block-comment", "template"]),
)
def test_property_js_marker_in_string_or_comment_is_never_a_marker(line: str, wrap: str) -> None:
    """Protects: any JS marker, once quoted or commented out, is text."""
    wrapped = {
        "json": f"const s = {json.dumps(line)};\n",
        "single": "const s = '" + line.replace("\\", "\\\\").replace("'", "\\'") + "';\n",
        "line-comment": f"// {line}\n",
        "block-comment": f"/* {line} */\n",
        "template": "const s = `" + line.replace("`", "\\`").replace("${", "\\${") + "`;\n",
    }[wrap]
    assert js_tests.js_markers(wrapped) == []


@settings(max_examples=150, deadline=None)
@given(text=st.one_of(st.text(max_size=300), TRICKY), other=st.one_of(st.text(max_size=100), TRICKY))
def test_property_scanner_never_raises(text: str, other: str) -> None:
    """Protects the gate from crashing on whatever an agent leaves behind."""
    for source in (text, "def test_x():\n" + text, "it('x', () => {\n" + text):
        assert isinstance(python_tests.python_test_defs(PY, source), list)
        assert isinstance(python_tests.python_markers(source), list)
        assert isinstance(js_tests.js_test_defs(JS, source), list)
        assert isinstance(js_tests.js_markers(source), list)
    scan = scan_changes([modify(PY, other, text), modify(JS, other, text), add("tests/x.py", text)])
    assert isinstance(scan, DiffScan)


@FAST
@given(old=py_sources(), new=py_sources(), old_js=js_sources(), new_js=js_sources())
def test_property_swapping_old_and_new_swaps_removed_and_added(old: str, new: str, old_js: str, new_js: str) -> None:
    """Protects the pairing: undoing a change undoes its count exactly."""
    forward = scan_changes([modify(PY, old, new), modify(JS, old_js, new_js)])
    backward = scan_changes([modify(PY, new, old), modify(JS, new_js, old_js)])
    assert forward.removed == backward.added
    assert forward.added == backward.removed


@FAST
@given(source=py_sources(broken=False))
def test_property_fallback_agrees_with_ast_on_valid_code(source: str) -> None:
    """Protects the broken-file path: on code that parses, the indentation
    scan finds exactly what `ast` finds, names and lines alike."""
    tree = parse_python(source)
    assert isinstance(tree, ast.Module)
    fallback = python_tests._view_test_defs(PY, codeview.python_view(source))
    assert fallback == python_tests._ast_test_defs(PY, tree)


@FAST
@given(source=st.one_of(js_sources(), TRICKY))
def test_property_js_view_keeps_offsets_and_lines(source: str) -> None:
    """Protects every reported line number: blanking keeps length and breaks."""
    view = jsview.js_view(source)
    assert len(view.code) == len(source)
    assert [i for i, c in enumerate(view.code) if c == "\n"] == [i for i, c in enumerate(source) if c == "\n"]
