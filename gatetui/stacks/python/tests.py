"""Python test definitions, and the markers that skip or xfail them.

`tests_kept` counts test definitions and `no_new_skips` looks for skip and
xfail markers; this module answers both for Python files. Definitions come
from `ast` when the file parses and from the code view's indentation when
it does not, so a broken file still shows which tests it holds. Markers
(`@pytest.mark.skip`, `pytest.xfail(`, `@unittest.skip`, `self.skipTest(`,
aliases bound by imports...) are patterns in the code view (see
`codeview`), examined only where a candidate word occurs, so text in strings
and comments never counts.

Pure: stdlib only, no I/O. Any input, however broken, yields an answer and
never an exception, because the code being judged is often mid-edit.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from gatetui.pyparse import parse_python
from gatetui.stacks.codeview import CodeView, hits_to_markers, is_word_char, normalize, python_view
from gatetui.stacks.testdefs import MarkerHit, TestDef

__all__ = ["python_marker_hits", "python_markers", "python_test_defs", "python_text_defs", "python_text_markers"]


# --------------------------------------------------------------------------
# Python: test definitions
# --------------------------------------------------------------------------


def python_test_defs(path: str, source: str) -> list[TestDef]:
    """Test functions and test methods in a Python file, in source order.

    A test is a function whose name starts with `test` (pytest's and
    unittest's default) at module level or in a class, at any depth of
    classes, including inside `if`/`try`/`with` blocks. Functions nested in
    functions are not tests. `ast` answers when the file parses; when it
    does not, the same rule runs over the code view's lines, so a broken
    file still shows which tests it holds.
    """
    return python_text_defs(path, normalize(source))[0]


def python_text_defs(path: str, text: str) -> tuple[list[TestDef], CodeView | None]:
    """Definitions of normalized text, and the view if one had to be built
    (the marker search can then reuse it)."""
    if "test" not in text:
        return [], None
    tree = parse_python(text)
    if tree is not None:
        return _ast_test_defs(path, tree), None
    view = python_view(text)
    return _view_test_defs(path, view), view


def _ast_test_defs(path: str, tree: ast.Module) -> list[TestDef]:
    """Test definitions from a parsed module."""
    out: list[TestDef] = []
    _collect_ast_defs(path, tree.body, (), out)
    return out


def _collect_ast_defs(path: str, body: Sequence[ast.stmt], classes: tuple[str, ...], out: list[TestDef]) -> None:
    """Walk statements, entering classes and compound blocks, not functions."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name.startswith("test"):
                out.append(TestDef(path, "::".join((*classes, node.name)), node.lineno, _span(node)))
        elif isinstance(node, ast.ClassDef):
            _collect_ast_defs(path, node.body, (*classes, node.name), out)
        else:
            for block in _child_blocks(node):
                _collect_ast_defs(path, block, classes, out)


def _span(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """A test's own lines: its decorators (a changed parametrize list is a
    changed test), its def, its body; a method's, not its class's."""
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return first, node.end_lineno or node.lineno


def _child_blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists inside a compound statement (if, try, with...)."""
    blocks: list[list[ast.stmt]] = []
    for name in ("body", "orelse", "finalbody"):
        value = getattr(node, name, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            blocks.append(value)
    blocks.extend(handler.body for handler in getattr(node, "handlers", ()))
    blocks.extend(case.body for case in getattr(node, "cases", ()))
    return blocks


_PY_DEF_LINE = re.compile(r"[ \t]*(?:async[ \t]+)?(def|class)[ \t]+([^\W\d]\w*)")
_PY_OPENERS = ("(", "[", "{")
_PY_CLOSERS = (")", "]", "}")


def _view_test_defs(path: str, view: CodeView) -> list[TestDef]:
    """Test definitions from indentation, for files that do not parse.

    Mirrors `_collect_ast_defs` line by line: a line that starts a statement
    closes every open def or class indented at least as far, and a
    `def test*` counts when all blocks still open around it are classes.
    A line inside brackets, after a backslash, or after a multi-line string
    continues a statement. In broken code a `def`/`class` line always starts
    one, so that a stray "(" cannot hide every test below it.
    """
    out: list[TestDef] = []
    scopes: list[tuple[int, str, str]] = []  # (indent, "def"|"class", name)
    depth, continued = 0, False
    for number, text in enumerate(view.code.split("\n"), 1):
        if not text.strip():
            continue
        opened = _PY_DEF_LINE.match(text)
        starts = number not in view.tail_lines and ((depth == 0 and not continued) or opened is not None)
        if starts:
            depth = 0
            indent = len(text[: len(text) - len(text.lstrip())].expandtabs(8))
            while scopes and scopes[-1][0] >= indent:
                scopes.pop()
            if opened is not None:
                keyword, name = opened.group(1), opened.group(2)
                in_function = any(kind == "def" for _, kind, _ in scopes)
                if keyword == "def" and not in_function and name.startswith("test"):
                    prefix = [scope_name for _, _, scope_name in scopes]
                    out.append(TestDef(path, "::".join((*prefix, name)), number))
                scopes.append((indent, keyword, name))
        depth += sum(map(text.count, _PY_OPENERS)) - sum(map(text.count, _PY_CLOSERS))
        depth = max(depth, 0)
        continued = text.endswith("\\")
    return out


# --------------------------------------------------------------------------
# Python: markers
# --------------------------------------------------------------------------

_PY_MARK_ATTRS: dict[str, str] = {"skip": "skip", "skipif": "skip", "xfail": "xfail"}
_PY_PYTEST_CALLS: dict[str, str] = {"skip": "skip", "importorskip": "skip", "xfail": "xfail"}
_PY_UNITTEST_DECORATORS: dict[str, str] = {
    "skip": "skip",
    "skipIf": "skip",
    "skipUnless": "skip",
    "expectedFailure": "xfail",
}
# Every marker's chain holds one of these words, or an alias of one bound by
# an import (which then joins the search).
_PY_MARKER_WORDS = (
    "skip",
    "skipif",
    "xfail",
    "importorskip",
    "skipIf",
    "skipUnless",
    "expectedFailure",
    "SkipTest",
    "skipTest",
)
_PY_MARKER_HINT = re.compile(r"skip|Skip|xfail|expectedFailure")
_PY_CHAIN_RIGHT = re.compile(r"\s*\.\s*([^\W\d]\w*)")
# Patterns lead with a literal where they can: `re` then skips ahead in C
# instead of trying the pattern at every character.
_PY_IMPORT = re.compile(r"import[ \t]*(\([^)]*\)|[^\n;]*)")
_PY_FROM_PREFIX = re.compile(r"[ \t]*from[ \t]+(pytest|unittest)[ \t]+")
_PY_IMPORT_ITEM = re.compile(r"([\w.]+)(?:\s+as\s+(\w+))?")


@dataclass
class _PyNames:
    """The names a file binds to pytest and unittest things.

    Starts from the usual spellings (bare `@skip(` counts, as the unittest
    import is common) and grows with the file's imports, so after
    `import pytest as pt`, `@pt.mark.skip` is still a skip.
    """

    pytest: set[str] = field(default_factory=lambda: {"pytest"})
    unittest: set[str] = field(default_factory=lambda: {"unittest"})
    mark: set[str] = field(default_factory=set)  # from pytest import mark
    calls: dict[str, str] = field(default_factory=dict)  # from pytest import skip
    decorators: dict[str, str] = field(default_factory=lambda: dict(_PY_UNITTEST_DECORATORS))
    skip_test: set[str] = field(default_factory=lambda: {"SkipTest"})

    def learn_module(self, module: str, alias: str | None) -> None:
        """Record `import module as alias`."""
        if alias and module == "pytest":
            self.pytest.add(alias)
        elif alias and module == "unittest":
            self.unittest.add(alias)

    def learn_name(self, module: str, name: str, bound: str) -> None:
        """Record `from module import name as bound`."""
        if module == "pytest" and name == "mark":
            self.mark.add(bound)
        elif module == "pytest" and name in _PY_PYTEST_CALLS:
            self.calls[bound] = _PY_PYTEST_CALLS[name]
        elif module == "unittest" and name in _PY_UNITTEST_DECORATORS:
            self.decorators[bound] = _PY_UNITTEST_DECORATORS[name]
        elif module == "unittest" and name == "SkipTest":
            self.skip_test.add(bound)

    def words(self) -> set[str]:
        """Every word whose presence may make a marker."""
        return {*_PY_MARKER_WORDS, *self.mark, *self.calls, *self.decorators, *self.skip_test}


def _python_imports(code: str) -> _PyNames:
    """The pytest/unittest names bound by the file's import statements:
    `import pytest as pt`, `from unittest import skip as sk` and the like."""
    names = _PyNames()
    for match in _PY_IMPORT.finditer(code):
        line_start = code.rfind("\n", 0, match.start()) + 1
        prefix = code[line_start : match.start()]
        if not prefix.strip():
            for item in _PY_IMPORT_ITEM.finditer(match.group(1)):
                names.learn_module(item.group(1), item.group(2))
        elif (source := _PY_FROM_PREFIX.fullmatch(prefix)) is not None:
            for item in _PY_IMPORT_ITEM.finditer(match.group(1)):
                name = item.group(1)
                names.learn_name(source.group(1), name, item.group(2) or name)
    return names


def python_markers(source: str) -> list[MarkerHit]:
    """Every skip/xfail marker in a Python file's code, as (line, kind, text).

    Only code counts: the same words in strings, docstrings and comments do
    not. The line is the one holding the marker's first name (`pytest` of
    `pytest.mark.skip`); a line with two markers of one kind reports once.
    """
    return python_text_markers(normalize(source), None)


def python_text_markers(text: str, view: CodeView | None) -> list[MarkerHit]:
    """Markers of normalized text, reusing its view when there is one.

    A file without a marker word, which is most of them, is not lexed.
    """
    if not _PY_MARKER_HINT.search(text):
        return []
    view = view or python_view(text)
    return hits_to_markers(view, python_marker_hits(view))


def python_marker_hits(view: CodeView) -> list[tuple[int, str]]:
    """(offset, kind) for each dotted name that is a marker where it stands."""
    code = view.code
    names = _python_imports(code) if "import" in code else _PyNames()
    words = sorted(names.words(), key=len, reverse=True)
    search = re.compile("(?:" + "|".join(map(re.escape, words)) + r")(?!\w)")
    hits: list[tuple[int, str]] = []
    seen: set[int] = set()
    for match in search.finditer(code):
        if is_word_char(view.char(match.start() - 1)):
            continue  # the tail of a longer name
        left, head, bare = view.chain_before(view.before(match.start()))
        if not left:
            head = match.start()
        if head in seen:
            continue
        seen.add(head)
        chain, end = [*left, match.group()], match.end()
        while (right := _PY_CHAIN_RIGHT.match(code, end)) is not None:
            chain.append(right.group(1))
            end = right.end()
        after = view.char(view.after(end))
        kind = _classify_python(chain, view.prev_token(head), after, names, bare)
        if kind is not None:
            hits.append((head, kind))
    return hits


def _classify_python(chain: list[str], prev: str, after: str, names: _PyNames, bare: bool) -> str | None:
    """The marker kind of a dotted name, given the tokens around it."""
    if chain[-1] == "skipTest" and after == "(" and (len(chain) > 1 or not bare):
        return "skip"  # self.skipTest(...)
    if not bare:
        return None
    head = chain[0]
    if head in names.pytest and len(chain) >= 2:
        if chain[1] == "mark":
            return _PY_MARK_ATTRS.get(chain[2]) if len(chain) >= 3 else None
        if len(chain) == 2 and after == "(":
            return _PY_PYTEST_CALLS.get(chain[1])
        if chain[1:] == ["skip", "Exception"] and prev == "raise":
            return "skip"
        return None
    if head in names.mark and len(chain) >= 2:
        return _PY_MARK_ATTRS.get(chain[1])
    if head in names.unittest and len(chain) == 2:
        if chain[1] == "SkipTest":
            return "skip" if prev == "raise" else None
        return _PY_UNITTEST_DECORATORS.get(chain[1])
    if len(chain) == 1:
        if after == "(" and head in names.calls:
            return names.calls[head]
        if prev == "@" and head in names.decorators:
            return names.decorators[head]
        if prev == "raise" and head in names.skip_test:
            return "skip"
    return None


def python_scan(path: str, text: str, markers: bool) -> tuple[list[TestDef], list[MarkerHit]]:
    """Definitions and (when asked) markers of one normalized version, lexing it at most once."""
    defs, view = python_text_defs(path, text)
    return defs, python_text_markers(text, view) if markers else []


_TEST_DIRS = frozenset({"test", "tests"})
_TEST_NAMES = frozenset({"conftest.py", "tests.py"})


def looks_like_python_test(path: str) -> bool:
    """`test_*.py`, `*_test.py`, `conftest.py`, Django's `tests.py`, or any
    `.py` under a `test`/`tests` directory."""
    parts = path.replace("\\", "/").split("/")
    name, dirs = parts[-1], {p.lower() for p in parts[:-1]}
    return name.lower().endswith(".py") and (
        name.startswith("test_") or name.endswith("_test.py") or name in _TEST_NAMES or not dirs.isdisjoint(_TEST_DIRS)
    )
