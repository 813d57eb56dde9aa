"""Read a change's test files for removed tests and newly switched-off ones.

Two gate checks answer from the diff alone, in milliseconds, before anything
runs: `tests_kept` (did the change delete more test definitions than it
added?) and `no_new_skips` (did an added line skip a test, expect it to fail,
or focus the run on a few tests?). Those are the two cheapest ways for an
agent to turn a red suite green without fixing anything, so they are worth
catching without executing a line of the code.

The scanner reads whole file contents, not diff hunks: only a lexer that sees
the whole file knows whether `@pytest.mark.skip` sits in code or inside a
docstring, a comment or a template string, and text in strings and comments
never counts. A line diff is still taken, but only to learn which lines of
the new file were added, since a marker that was already there is not new.

Pure: stdlib only, no I/O. Any input, however broken, yields an answer and
never an exception, because the code being judged is often mid-edit.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import ClassVar, Literal, NamedTuple

from gatetui.changes import FileChange

__all__ = [
    "DiffScan",
    "JS_SUFFIXES",
    "Marker",
    "PY_SUFFIXES",
    "TestDef",
    "added_lines",
    "js_markers",
    "js_test_defs",
    "language_of",
    "looks_like_test_file",
    "python_markers",
    "python_test_defs",
    "scan_changes",
]

Language = Literal["python", "js"]
MarkerKind = Literal["skip", "xfail", "focus"]
MarkerHit = tuple[int, str, str]  # (line, kind, stripped source line)

PY_SUFFIXES: tuple[str, ...] = (".py",)
JS_SUFFIXES: tuple[str, ...] = (
    ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".mts", ".cts",
)


# --------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class TestDef:
    """One test definition, named the way a person would look for it.

    Python: `test_foo`, or `Cls::test_foo` for a method (`A::B::test_x` when
    classes nest). JS/TS: the test's title, prefixed by the titles of the
    enclosing describe blocks joined with " > ".
    """

    __test__: ClassVar[bool] = False  # a dataclass, not a pytest test class

    path: str
    name: str
    line: int  # 1-based

    @property
    def qualified(self) -> str:
        """`path::name`, the form pytest and the gate's details use."""
        return f"{self.path}::{self.name}"


@dataclass(frozen=True)
class Marker:
    """A skip, xfail or focus marker on an added line of a test file."""

    path: str
    line: int  # 1-based, in the new file
    kind: str  # "skip" | "xfail" | "focus"
    text: str  # the stripped source line, shown in the check's detail

    def describe(self) -> str:
        """`path:line kind: text`, one marker in words."""
        return f"{self.path}:{self.line} {self.kind}: {self.text}"


@dataclass(frozen=True)
class DiffScan:
    """What a change did to its test files' definitions and markers."""

    removed: tuple[TestDef, ...]  # in an old file, gone from its new version
    added: tuple[TestDef, ...]  # in a new file, absent from its old version
    markers: tuple[Marker, ...]  # on added lines only
    files_scanned: int = field(default=0)  # test files in the change, scanned

    def tests_kept_ok(self) -> bool:
        """True unless the change removed more tests than it added.

        Counting rather than matching names lets a rename of a test pass:
        the old name is removed and the new one added, a net of zero.
        """
        return len(self.added) >= len(self.removed)

    def no_new_skips_ok(self) -> bool:
        """True when no added line skips, xfails or focuses a test."""
        return not self.markers

    def tests_kept_detail(self, limit: int = 5) -> str:
        """`2 removed, 0 added: tests/test_x.py::test_a, ...` for the check."""
        head = f"{len(self.removed)} removed, {len(self.added)} added"
        if not self.removed:
            return head
        names = [d.qualified for d in self.removed[:limit]]
        more = len(self.removed) - len(names)
        if more:
            names.append(f"and {more} more")
        return f"{head}: {', '.join(names)}"

    def skips_detail(self, limit: int = 5) -> str:
        """The new markers, each as `path:line kind: text`, for the check."""
        if not self.markers:
            return "no new skip, xfail or focus markers"
        count = len(self.markers)
        noun = "marker" if count == 1 else "markers"
        parts = [m.describe() for m in self.markers[:limit]]
        if count > limit:
            parts.append(f"and {count - limit} more")
        return f"{count} new {noun}: " + "; ".join(parts)

    def summary(self) -> str:
        """Both checks' details on one line, for logs and the plain CLI."""
        return f"{self.tests_kept_detail()}; {self.skips_detail()}"


# --------------------------------------------------------------------------
# Which files, which language
# --------------------------------------------------------------------------

_PY_TEST_DIRS = frozenset({"test", "tests"})
_JS_TEST_DIRS = frozenset({"test", "tests", "__tests__"})
_PY_TEST_NAMES = frozenset({"conftest.py", "tests.py"})


def language_of(path: str) -> Language | None:
    """The language a file is scanned as, from its extension, or None."""
    lower = path.lower()
    if lower.endswith(PY_SUFFIXES):
        return "python"
    if lower.endswith(JS_SUFFIXES):
        return "js"
    return None


def looks_like_test_file(path: str) -> bool:
    """The default guess at whether a path holds tests.

    Python: `test_*.py`, `*_test.py`, `conftest.py`, Django's `tests.py`, or
    any `.py` under a `test`/`tests` directory. JS/TS: `*.test.*`, `*.spec.*`,
    or under a `test`/`tests`/`__tests__` directory. Only these files are
    scanned, so a `skip(` in application code is never taken for a marker.
    """
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    dirs = {p.lower() for p in parts[:-1]}
    language = language_of(name)
    if language == "python":
        return (
            name.startswith("test_")
            or name.endswith("_test.py")
            or name in _PY_TEST_NAMES
            or not dirs.isdisjoint(_PY_TEST_DIRS)
        )
    if language == "js":
        inner = {p.lower() for p in name.split(".")[1:-1]}
        return (
            "test" in inner
            or "spec" in inner
            or not dirs.isdisjoint(_JS_TEST_DIRS)
        )
    return False


def _decode(data: bytes) -> str:
    """Bytes as text with one newline convention.

    Line numbers from `ast`, `tokenize`, the lexers here and the line diff
    must agree, and they only do when `\\r` and `\\r\\n` are already `\\n`.
    """
    return _normalize(data.decode("utf-8", errors="replace"))


def _normalize(text: str) -> str:
    """Drop a BOM and turn `\\r\\n` and lone `\\r` into `\\n`."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _hits_with_text(
    hits: Iterable[tuple[int, str]], source: str
) -> list[MarkerHit]:
    """One (line, kind, text) per distinct (line, kind), in line order.

    Two markers of one kind on one line (rare, and one edit) are reported
    once, so a detail never lists the same line twice for the same reason.
    """
    lines = source.split("\n")
    out: list[MarkerHit] = []
    for line, kind in sorted(set(hits)):
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        out.append((line, kind, text))
    return out


# --------------------------------------------------------------------------
# Python: tokens
# --------------------------------------------------------------------------


class _PyTok(NamedTuple):
    """A code token: strings are opaque, comments are gone.

    kind is "name", "op", "str", "num" or "nl" (the end of a logical line).
    col is the character offset in the physical line.
    """

    kind: str
    text: str
    line: int
    col: int


_TOKENIZE_KINDS: dict[int, str] = {
    tokenize.NAME: "name",
    tokenize.OP: "op",
    tokenize.STRING: "str",
    tokenize.NUMBER: "num",
    tokenize.NEWLINE: "nl",
    tokenize.ERRORTOKEN: "op",
}
if hasattr(tokenize, "FSTRING_START"):  # Python 3.12+ splits f-strings up
    _TOKENIZE_KINDS[tokenize.FSTRING_START] = "str"


def _python_tokens(source: str) -> list[_PyTok]:
    """The code tokens of a Python file, whatever state it is in.

    `tokenize` is the reference lexer, but it gives up on an unclosed
    bracket or triple-quoted string at the end of the file and on a dedent
    to an unknown level: exactly what half-edited agent code looks like.
    Then a tolerant lexer, which never fails, reads the file instead.
    """
    try:
        return _tokenize_python(source)
    except (tokenize.TokenError, SyntaxError, ValueError):
        return _lex_python_tolerant(source)


def _tokenize_python(source: str) -> list[_PyTok]:
    """`tokenize`'s view of the file, reduced to code tokens."""
    out: list[_PyTok] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        kind = _TOKENIZE_KINDS.get(tok.type)
        if kind is None or (kind == "op" and not tok.string.strip()):
            continue
        out.append(_PyTok(kind, tok.string, tok.start[0], tok.start[1]))
    return out


_PY_STRING = (
    r"(?:[rRbBuUfF]{1,2})?"
    r"(?:'''(?:[^'\\]|\\[\s\S]|'(?!''))*(?:'''|\Z)"
    r'|"""(?:[^"\\]|\\[\s\S]|"(?!""))*(?:"""|\Z)'
    r"|'(?:[^'\\\n]|\\[\s\S])*(?:'|(?=\n)|\Z)"
    r'|"(?:[^"\\\n]|\\[\s\S])*(?:"|(?=\n)|\Z))'
)
_PY_LEX = re.compile(
    r"(?P<nl>\n)"
    r"|(?P<ws>[ \t\f\r]+|\\\n)"
    r"|(?P<comment>\#[^\n]*)"
    rf"|(?P<str>{_PY_STRING})"
    r"|(?P<name>[^\W\d]\w*)"
    r"|(?P<num>\.?\d(?:\w|\.|(?<=[eE])[+-])*)"
    r"|(?P<op>[\s\S])"
)
# After an unclosed bracket, a line opening a def or class starts afresh:
# in broken code that guess keeps one stray "(" from hiding every test below.
_PY_BLOCK_START = re.compile(r"[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+\w")
_PY_OPEN = frozenset("([{")
_PY_CLOSE = frozenset(")]}")


def _lex_python_tolerant(source: str) -> list[_PyTok]:
    """Python code tokens from any text; never raises.

    Same token shapes as `_tokenize_python`. An unterminated one-line string
    ends at its line's end, an unterminated triple-quoted one at the file's.
    """
    out: list[_PyTok] = []
    pos, line, line_start, depth = 0, 1, 0, 0
    open_logical = False
    size = len(source)
    while pos < size:
        match = _PY_LEX.match(source, pos)
        assert match is not None  # the last alternative takes any character
        kind, text, end = match.lastgroup or "op", match.group(), match.end()
        if kind == "nl":
            line, line_start = line + 1, end
            if depth and _PY_BLOCK_START.match(source, end):
                depth = 0
            if depth == 0 and open_logical:
                out.append(_PyTok("nl", "", line - 1, pos - line_start))
                open_logical = False
        elif kind in ("ws", "comment"):
            if text == "\\\n":
                line, line_start = line + 1, end
        else:
            out.append(_PyTok(kind, text, line, pos - line_start))
            open_logical = True
            if kind == "op":
                if text in _PY_OPEN:
                    depth += 1
                elif text in _PY_CLOSE and depth:
                    depth -= 1
            elif kind == "str" and "\n" in text:
                line += text.count("\n")
                line_start = pos + text.rfind("\n") + 1
        pos = end
    if open_logical:
        out.append(_PyTok("nl", "", line, 0))
    return out


def _indent_width(lines: Sequence[str], line: int, col: int) -> int:
    """How far a line's first token is indented, with tabs to 8 columns."""
    if not 0 < line <= len(lines):
        return col
    return len(lines[line - 1][:col].expandtabs(8))


# --------------------------------------------------------------------------
# Python: test definitions
# --------------------------------------------------------------------------


def python_test_defs(path: str, source: str) -> list[TestDef]:
    """Test functions and test methods in a Python file, in source order.

    A test is a function whose name starts with `test` (pytest's and
    unittest's default) at module level or in a class, at any depth of
    classes, including inside `if`/`try`/`with` blocks. Functions nested in
    functions are not tests. `ast` answers when the file parses; when it
    does not, the same rule runs over tokens and indentation, so a broken
    file still shows which tests it holds.
    """
    source = _normalize(source)
    if "test" not in source:
        return []
    tree = _parse_python(source)
    if tree is not None:
        return _ast_test_defs(path, tree)
    return _token_test_defs(path, _python_tokens(source), source.split("\n"))


def _parse_python(source: str) -> ast.Module | None:
    """The parsed module, or None when the file is not valid Python.

    Warnings are silenced because the file is the agent's, not ours: an
    invalid escape warns, and under `-W error` the warning would become a
    SyntaxError that hides every test in an otherwise fine file.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _ast_test_defs(path: str, tree: ast.Module) -> list[TestDef]:
    """Test definitions from a parsed module."""
    out: list[TestDef] = []
    _collect_ast_defs(path, tree.body, (), out)
    return out


def _collect_ast_defs(
    path: str, body: Sequence[ast.stmt], classes: tuple[str, ...],
    out: list[TestDef],
) -> None:
    """Walk statements, entering classes and compound blocks, not functions."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name.startswith("test"):
                name = "::".join((*classes, node.name))
                out.append(TestDef(path, name, node.lineno))
        elif isinstance(node, ast.ClassDef):
            _collect_ast_defs(path, node.body, (*classes, node.name), out)
        else:
            for block in _child_blocks(node):
                _collect_ast_defs(path, block, classes, out)


def _child_blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists inside a compound statement (if, try, with, ...)."""
    blocks: list[list[ast.stmt]] = []
    for name in ("body", "orelse", "finalbody"):
        value = getattr(node, name, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            blocks.append(value)
    for handler in getattr(node, "handlers", ()):
        blocks.append(handler.body)
    for case in getattr(node, "cases", ()):
        blocks.append(case.body)
    return blocks


def _token_test_defs(
    path: str, toks: Sequence[_PyTok], lines: Sequence[str]
) -> list[TestDef]:
    """Test definitions from tokens and indentation, for unparseable files.

    Mirrors `_collect_ast_defs`: each logical line closes every open def or
    class indented at least as far, and a `def test*` counts when all the
    blocks still open around it are classes.
    """
    out: list[TestDef] = []
    scopes: list[tuple[int, str, str]] = []  # (indent, "def"|"class", name)
    at_start = True
    for i, tok in enumerate(toks):
        if tok.kind == "nl":
            at_start = True
            continue
        if not at_start:
            continue
        at_start = False
        indent = _indent_width(lines, tok.line, tok.col)
        while scopes and scopes[-1][0] >= indent:
            scopes.pop()
        opened = _opened_block(toks, i)
        if opened is None:
            continue
        keyword, name, line = opened
        in_function = any(kind == "def" for _, kind, _ in scopes)
        if keyword == "def" and not in_function and name.startswith("test"):
            prefix = [n for _, _, n in scopes]
            out.append(TestDef(path, "::".join((*prefix, name)), line))
        scopes.append((indent, keyword, name))
    return out


def _opened_block(
    toks: Sequence[_PyTok], i: int
) -> tuple[str, str, int] | None:
    """(`def` or `class`, name, line) when a logical line opens one."""
    if toks[i].kind == "name" and toks[i].text == "async":
        i += 1
    if i + 1 >= len(toks):
        return None
    keyword, name = toks[i], toks[i + 1]
    if keyword.kind != "name" or keyword.text not in ("def", "class"):
        return None
    if name.kind != "name":
        return None
    return keyword.text, name.text, keyword.line


# --------------------------------------------------------------------------
# Python: markers
# --------------------------------------------------------------------------

_PY_MARK_ATTRS: dict[str, str] = {
    "skip": "skip", "skipif": "skip", "xfail": "xfail",
}
_PY_PYTEST_CALLS: dict[str, str] = {
    "skip": "skip", "importorskip": "skip", "xfail": "xfail",
}
_PY_UNITTEST_DECOS: dict[str, str] = {
    "skip": "skip", "skipIf": "skip", "skipUnless": "skip",
    "expectedFailure": "xfail",
}
# Every Python marker's source holds one of these words (aliases included,
# since the import naming them does), so files without one skip the lexer.
_PY_MARKER_HINT = re.compile(r"skip|xfail|expectedFailure", re.IGNORECASE)


@dataclass
class _PyNames:
    """The names a file binds to pytest and unittest things.

    Starts from the usual spellings and grows with the file's imports, so
    `import pytest as pt` then `@pt.mark.skip` is still a skip.
    """

    pytest: set[str] = field(default_factory=lambda: {"pytest"})
    unittest: set[str] = field(default_factory=lambda: {"unittest"})
    mark: set[str] = field(default_factory=set)  # from pytest import mark
    calls: dict[str, str] = field(default_factory=dict)  # pytest.skip & co
    decorators: dict[str, str] = field(
        default_factory=lambda: dict(_PY_UNITTEST_DECOS)
    )
    skip_test: set[str] = field(default_factory=lambda: {"SkipTest"})

    def learn(self, module: str, name: str | None, bound: str) -> None:
        """Record one imported name: `import module as bound` when name is
        None, else `from module import name as bound`."""
        if name is None:
            if module == "pytest":
                self.pytest.add(bound)
            elif module == "unittest":
                self.unittest.add(bound)
        elif module == "pytest":
            if name == "mark":
                self.mark.add(bound)
            elif name in _PY_PYTEST_CALLS:
                self.calls[bound] = _PY_PYTEST_CALLS[name]
        elif module == "unittest":
            if name in _PY_UNITTEST_DECOS:
                self.decorators[bound] = _PY_UNITTEST_DECOS[name]
            elif name == "SkipTest":
                self.skip_test.add(bound)


def python_markers(source: str) -> list[MarkerHit]:
    """Every skip/xfail marker in a Python file's code, as (line, kind, text).

    Only code tokens count; the same words in strings, docstrings and
    comments do not. The line is the one holding the marker's first token.
    """
    source = _normalize(source)
    if not _PY_MARKER_HINT.search(source):
        return []
    toks = _python_tokens(source)
    return _hits_with_text(_python_marker_hits(toks), source)


def _python_marker_hits(toks: Sequence[_PyTok]) -> list[tuple[int, str]]:
    """(line, kind) for each dotted name that is a marker in its place."""
    names = _python_imports(toks)
    hits: list[tuple[int, str]] = []
    for i, tok in enumerate(toks):
        if tok.kind != "name" or _after_dot(toks, i):
            continue
        chain, end = _dotted(toks, i)
        prev = toks[i - 1].text if i else ""
        after = toks[end].text if end < len(toks) else ""
        kind = _classify_python(chain, prev, after, names)
        if kind is not None:
            hits.append((tok.line, kind))
    return hits


def _after_dot(toks: Sequence[_PyTok], i: int) -> bool:
    """Whether token i is an attribute (`x.<i>`) rather than a bare name."""
    return i > 0 and toks[i - 1].kind == "op" and toks[i - 1].text == "."


def _dotted(toks: Sequence[_PyTok], i: int) -> tuple[list[str], int]:
    """The dotted name starting at token i, and the index just after it."""
    chain = [toks[i].text]
    j = i + 1
    while (
        j + 1 < len(toks)
        and toks[j].kind == "op" and toks[j].text == "."
        and toks[j + 1].kind == "name"
    ):
        chain.append(toks[j + 1].text)
        j += 2
    return chain, j


def _classify_python(
    chain: Sequence[str], prev: str, after: str, names: _PyNames
) -> str | None:
    """The marker kind of a dotted name, given the tokens around it."""
    head = chain[0]
    if head in names.pytest and len(chain) >= 2:
        if chain[1] == "mark":
            return _PY_MARK_ATTRS.get(chain[2]) if len(chain) >= 3 else None
        if len(chain) == 2 and after == "(":
            return _PY_PYTEST_CALLS.get(chain[1])
        if list(chain[1:]) == ["skip", "Exception"] and prev == "raise":
            return "skip"
        return None
    if head in names.mark and len(chain) >= 2:
        return _PY_MARK_ATTRS.get(chain[1])
    if head in names.unittest and len(chain) == 2:
        if chain[1] in _PY_UNITTEST_DECOS:
            return _PY_UNITTEST_DECOS[chain[1]]
        if chain[1] == "SkipTest" and prev == "raise":
            return "skip"
        return None
    if len(chain) == 1:
        if after == "(" and head in names.calls:
            return names.calls[head]
        if prev == "@" and head in names.decorators:
            return names.decorators[head]
        if prev == "raise" and head in names.skip_test:
            return "skip"
        return None
    if chain[-1] == "skipTest" and after == "(":
        return "skip"
    return None


def _python_imports(toks: Sequence[_PyTok]) -> _PyNames:
    """The pytest/unittest names the file's import statements bind."""
    names = _PyNames()
    for i, tok in enumerate(toks):
        if tok.kind != "name":
            continue
        if tok.text == "from" and _starts_statement(toks, i):
            module, j = _dotted(toks, i + 1) if i + 1 < len(toks) else ([], i)
            if j < len(toks) and toks[j].text == "import" and module:
                for name, bound in _import_list(toks, j + 1):
                    names.learn(".".join(module), name, bound)
        elif tok.text == "import" and _starts_statement(toks, i):
            for name, bound in _import_list(toks, i + 1):
                names.learn(name, None, bound)
    return names


def _starts_statement(toks: Sequence[_PyTok], i: int) -> bool:
    """Whether token i begins a simple statement."""
    return i == 0 or toks[i - 1].kind == "nl" or toks[i - 1].text in (";", ":")


def _import_list(toks: Sequence[_PyTok], j: int) -> list[tuple[str, str]]:
    """(name, bound name) pairs of an import list: `a.b as c, d`, `(e, f)`."""
    pairs: list[tuple[str, str]] = []
    while j < len(toks) and toks[j].kind != "nl":
        if toks[j].text in ("(", ")", ","):
            j += 1
            continue
        if toks[j].kind != "name":
            break
        chain, j = _dotted(toks, j)
        bound = chain[0]
        if (
            j + 1 < len(toks) and toks[j].text == "as"
            and toks[j + 1].kind == "name"
        ):
            bound = toks[j + 1].text
            j += 2
        pairs.append((".".join(chain), bound))
    return pairs


# --------------------------------------------------------------------------
# JS/TS: tokens
# --------------------------------------------------------------------------


class _JsTok(NamedTuple):
    """A code token. kind: "id", "str" (raw literal with its quotes),
    "tmpl" (raw template body between the backticks), "num", "re" or "p"
    (one punctuation character)."""

    kind: str
    text: str
    line: int


_JS_LEX = re.compile(
    r"(?P<ws>\s+)"
    r"|(?P<comment>//[^\n]*|/\*[\s\S]*?(?:\*/|\Z))"
    r"|(?P<str>'(?:[^'\\\n]|\\[\s\S])*'?|\"(?:[^\"\\\n]|\\[\s\S])*\"?)"
    r"|(?P<id>(?:[^\W\d]|\$)(?:\w|\$)*)"
    r"|(?P<num>\.?\d(?:\w|\.|(?<=[eE])[+-])*)"
    r"|(?P<p>[\s\S])"
)
_JS_REGEX = re.compile(
    r"/(?![*/])(?:[^/\\\[\n]|\\.|\[(?:[^\]\\\n]|\\.)*\])+/\w*"
)
_JS_TEMPLATE_CHUNK = re.compile(r"(?:[^`\\$]|\\[\s\S]|\$(?!\{))*")
# After these words a "/" starts a regex literal; after other words, a
# number, a string or a closing bracket it divides.
_JS_WORDS_BEFORE_REGEX = frozenset({
    "return", "typeof", "instanceof", "in", "of", "new", "delete", "void",
    "throw", "case", "do", "else", "yield", "await",
})


class _TemplateFrame(NamedTuple):
    """An open template literal: its token's index, start offset, line."""

    index: int
    start: int
    line: int


def _regex_allowed(last: _JsTok | None) -> bool:
    """Whether a "/" after this token opens a regex literal (a heuristic)."""
    if last is None:
        return True
    if last.kind == "p":
        return last.text not in (")", "]", "}")
    if last.kind == "id":
        return last.text in _JS_WORDS_BEFORE_REGEX
    return False


def _lex_js(source: str) -> list[_JsTok]:
    """The code tokens of a JS/TS file; never raises.

    Comments vanish; strings, templates and regex literals become single
    opaque tokens, so their contents can never be taken for a test or a
    marker. Code inside `${...}` is lexed as code, templates nesting in it.
    An unterminated quote ends at its line's end, so one stray apostrophe
    (JSX text, say) costs a line, not the rest of the file.
    """
    toks: list[_JsTok] = []
    braces: list[_TemplateFrame | None] = []  # None is a plain "{"
    last: _JsTok | None = None
    pos, line, size = 0, 1, len(source)
    if source.startswith("#!"):
        pos = source.find("\n")
        pos = size if pos < 0 else pos

    def template(frame: _TemplateFrame, at: int) -> int:
        """Read template text from `at`; close it or enter a `${`."""
        nonlocal last
        chunk = _JS_TEMPLATE_CHUNK.match(source, at)
        end = chunk.end() if chunk else at
        if source.startswith("${", end):
            braces.append(frame)
            last = _JsTok("p", "{", line)
            return end + 2
        done = _JsTok("tmpl", source[frame.start + 1:end], frame.line)
        toks[frame.index] = done
        last = done
        return min(end + 1, size)

    while pos < size:
        char = source[pos]
        if char == "`":
            frame = _TemplateFrame(len(toks), pos, line)
            toks.append(_JsTok("tmpl", "", line))
            end = template(frame, pos + 1)
        elif char == "}" and braces and braces[-1] is not None:
            frame_or_none = braces.pop()
            assert frame_or_none is not None
            end = template(frame_or_none, pos + 1)
        elif (
            char == "/" and source[pos + 1:pos + 2] not in ("/", "*")
            and _regex_allowed(last)
            and (regex := _JS_REGEX.match(source, pos)) is not None
        ):
            last = _JsTok("re", regex.group(), line)
            toks.append(last)
            end = regex.end()
        else:
            match = _JS_LEX.match(source, pos)
            assert match is not None  # the last alternative takes anything
            kind, end = match.lastgroup or "p", match.end()
            if kind not in ("ws", "comment"):
                last = _JsTok(kind, match.group(), line)
                toks.append(last)
                if char == "{":
                    braces.append(None)
                elif char == "}" and braces:
                    braces.pop()
        line += source.count("\n", pos, end)
        pos = end
    for frame_or_none in braces:  # templates left open at the end of file
        if frame_or_none is not None:
            toks[frame_or_none.index] = _JsTok(
                "tmpl", source[frame_or_none.start + 1:], frame_or_none.line
            )
    return toks


_JS_OPENERS = {"(": ")", "[": "]", "{": "}"}
_JS_CLOSERS = {")": "(", "]": "[", "}": "{"}


def _match_brackets(toks: Sequence[_JsTok]) -> list[int]:
    """For each opening bracket's index, the index of its closer.

    Brackets left open run to the end (len(toks)). A stray closer only
    closes an opener among the few innermost, so mis-lexed JSX or regexes
    cannot make the pass quadratic.
    """
    ends = [-1] * len(toks)
    stack: list[int] = []
    for i, tok in enumerate(toks):
        if tok.kind != "p":
            continue
        if tok.text in _JS_OPENERS:
            stack.append(i)
        elif tok.text in _JS_CLOSERS:
            want = _JS_CLOSERS[tok.text]
            for depth in range(len(stack) - 1, max(len(stack) - 9, -1), -1):
                if toks[stack[depth]].text == want:
                    for opener in stack[depth:]:
                        ends[opener] = i
                    del stack[depth:]
                    break
    for opener in stack:
        ends[opener] = len(toks)
    return ends


_JS_STRING_BODY = re.compile(r"""(['"])((?:(?!\1)[^\\\n]|\\[\s\S])*)""")
_JS_ESCAPE = re.compile(r"\\([\s\S])")
_JS_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\n": ""}


def _js_literal_value(tok: _JsTok) -> str:
    """The text a string or template token stands for, as a test title."""
    if tok.kind == "tmpl":
        return tok.text
    match = _JS_STRING_BODY.match(tok.text)
    body = match.group(2) if match else tok.text
    return _JS_ESCAPE.sub(
        lambda m: _JS_SIMPLE_ESCAPES.get(m.group(1), m.group(1)), body
    )


# --------------------------------------------------------------------------
# JS/TS: calls of it/test/describe
# --------------------------------------------------------------------------

_JS_TEST_FUNCS = frozenset({
    "it", "test", "specify", "xit", "xtest", "xspecify", "fit",
})
_JS_SUITE_FUNCS = frozenset({
    "describe", "suite", "context", "xdescribe", "xcontext", "fdescribe",
})
# Modifiers that leave a call a definition (`it.skip("t", fn)` is still a
# test, one the marker check reports); `it.todo` is a placeholder, not one.
_JS_DEF_MODIFIERS = frozenset({
    "only", "skip", "concurrent", "sequential", "each", "skipIf", "runIf",
})
# Modifiers taking their own arguments before the title's call:
# `it.each(table)("title", fn)`, `test.skipIf(cond)("title", fn)`.
_JS_ARG_MODIFIERS = frozenset({"each", "skipIf", "runIf"})


class _JsCall(NamedTuple):
    """`base.mod1.mod2(...)`: base token index, modifiers, call brackets."""

    base: int
    mods: tuple[tuple[str, int], ...]  # (modifier, its token index)
    open: int  # index of the "(" taking the title
    close: int  # index of its ")" (len(toks) when unclosed)


def _is_p(toks: Sequence[_JsTok], i: int, text: str) -> bool:
    """Whether token i exists and is the punctuation `text`."""
    return i < len(toks) and toks[i].kind == "p" and toks[i].text == text


def _js_bare(toks: Sequence[_JsTok], i: int) -> bool:
    """Whether identifier i is not a property: `regex.test(` is no test."""
    return not (i > 0 and toks[i - 1].kind == "p" and toks[i - 1].text == ".")


def _js_call(
    toks: Sequence[_JsTok], ends: Sequence[int], i: int
) -> _JsCall | None:
    """The call starting at identifier i, through any `.modifier`s."""
    j = i + 1
    mods: list[tuple[str, int]] = []
    while _is_p(toks, j, ".") and j + 1 < len(toks) and toks[j + 1].kind == "id":
        mods.append((toks[j + 1].text, j + 1))
        j += 2
        if mods[-1][0] in _JS_ARG_MODIFIERS:
            if _is_p(toks, j, "("):
                j = ends[j] + 1
            elif j < len(toks) and toks[j].kind == "tmpl":
                j += 1  # it.each`table`
    if not _is_p(toks, j, "("):
        return None
    return _JsCall(i, tuple(mods), j, ends[j])


def _js_title(toks: Sequence[_JsTok], call: _JsCall) -> str | None:
    """The call's first argument when it is a string or template literal."""
    first = call.open + 1
    if first < min(call.close, len(toks)) and toks[first].kind in ("str", "tmpl"):
        return _js_literal_value(toks[first])
    return None


def js_test_defs(path: str, source: str) -> list[TestDef]:
    """Test definitions in a JS/TS file, in source order.

    A definition is a call of `it`/`test` (also `specify`, `xit`, `fit`,
    ...), bare or through `.only`/`.skip`/`.concurrent`/`.each(...)`, whose
    first argument is a string or template literal. `foo.test(` is a method
    call, not a test. Names carry their describe blocks: "math > adds".
    """
    toks = _lex_js(_normalize(source))
    return _js_defs_from(path, toks, _match_brackets(toks))


def _js_defs_from(
    path: str, toks: Sequence[_JsTok], ends: Sequence[int]
) -> list[TestDef]:
    """Test definitions from tokens, tracking the describe blocks open."""
    out: list[TestDef] = []
    suites: list[tuple[int, str]] = []  # (closing index, title)
    for i, tok in enumerate(toks):
        while suites and suites[-1][0] < i:
            suites.pop()
        if tok.kind != "id" or not _js_bare(toks, i):
            continue
        is_test = tok.text in _JS_TEST_FUNCS
        if not is_test and tok.text not in _JS_SUITE_FUNCS:
            continue
        call = _js_call(toks, ends, i)
        if call is None or any(m not in _JS_DEF_MODIFIERS for m, _ in call.mods):
            continue
        title = _js_title(toks, call)
        if title is None:
            continue
        if is_test:
            name = " > ".join([t for _, t in suites] + [title])
            out.append(TestDef(path, name, tok.line))
        else:
            suites.append((call.close, title))
    return out


# --------------------------------------------------------------------------
# JS/TS: markers
# --------------------------------------------------------------------------

_JS_MARK_BASES = frozenset({
    "it", "test", "describe", "suite", "context", "specify",
})
_JS_MODIFIER_KINDS: dict[str, str] = {
    "only": "focus", "skip": "skip", "todo": "skip",
    "skipIf": "skip", "runIf": "skip",
}
_JS_PREFIXED: dict[str, str] = {
    "xit": "skip", "xtest": "skip", "xspecify": "skip",
    "xdescribe": "skip", "xcontext": "skip",
    "fit": "focus", "fdescribe": "focus",
}
_JS_OPTION_BASES = frozenset({"it", "test", "describe", "suite"})
_JS_OPTION_KEYS: dict[str, str] = {"skip": "skip", "todo": "skip", "only": "focus"}
_JS_FALSY = frozenset({"false", "null", "undefined", "0"})
# Receivers of a runtime skip: node:test's `t`, vitest's `ctx`/`context`,
# mocha's `this`. `stream.skip(3)` has none of them, so it is no marker.
_JS_SKIP_RECEIVERS = frozenset({"t", "ctx", "context", "this"})
_JS_MARKER_HINT = re.compile(
    r"only|skip|todo|runIf|xit|xtest|xspecify|xdescribe|xcontext|fit|fdescribe"
)


def js_markers(source: str) -> list[MarkerHit]:
    """Every skip/focus marker in a JS/TS file's code, as (line, kind, text).

    `.only`, `.skip`, `.todo`, `.skipIf`, `.runIf` on it/test/describe/
    suite/context, `xit`/`xdescribe`/`fit`/`fdescribe` & co, node:test
    options `{ skip: true }` / `{ todo: ... }` / `{ only: true }`, and
    `t.skip()`/`this.skip()`. Never text in strings, templates or comments,
    and never `.skip(` on other objects.
    """
    source = _normalize(source)
    if not _JS_MARKER_HINT.search(source):
        return []
    toks = _lex_js(source)
    hits = _js_marker_hits(toks, _match_brackets(toks))
    return _hits_with_text(hits, source)


def _js_marker_hits(
    toks: Sequence[_JsTok], ends: Sequence[int]
) -> list[tuple[int, str]]:
    """(line, kind) for each marker among the tokens."""
    hits: list[tuple[int, str]] = []
    for i, tok in enumerate(toks):
        if tok.kind != "id" or not _js_bare(toks, i):
            continue
        if tok.text in _JS_SKIP_RECEIVERS:
            hits.extend(_js_receiver_hits(toks, ends, i))
        if tok.text not in _JS_MARK_BASES and tok.text not in _JS_PREFIXED:
            continue
        call = _js_call(toks, ends, i)
        if call is None:
            continue
        if tok.text in _JS_PREFIXED:
            if _js_title(toks, call) is not None:
                hits.append((tok.line, _JS_PREFIXED[tok.text]))
            continue
        for mod, at in call.mods:
            if mod in _JS_MODIFIER_KINDS:
                hits.append((toks[at].line, _JS_MODIFIER_KINDS[mod]))
        if tok.text in _JS_OPTION_BASES:
            hits.extend(_js_option_hits(toks, ends, call))
    return hits


def _js_receiver_hits(
    toks: Sequence[_JsTok], ends: Sequence[int], i: int
) -> list[tuple[int, str]]:
    """`t.skip(`/`t.todo(`, and options on a node subtest `t.test(...)`."""
    if not _is_p(toks, i + 1, ".") or i + 2 >= len(toks):
        return []
    member = toks[i + 2]
    if member.kind != "id":
        return []
    if member.text in ("skip", "todo") and _is_p(toks, i + 3, "("):
        return [(member.line, "skip")]
    if member.text == "test":
        call = _js_call(toks, ends, i + 2)
        if call is not None:
            return _js_option_hits(toks, ends, call)
    return []


def _js_option_hits(
    toks: Sequence[_JsTok], ends: Sequence[int], call: _JsCall
) -> list[tuple[int, str]]:
    """Markers in object literals passed directly as the call's arguments.

    `test("t", { skip: true }, fn)` skips; a `{ skip: true }` inside the
    test's own body is just data, so only an object that starts an argument
    is read, and only its top-level keys.
    """
    hits: list[tuple[int, str]] = []
    k, stop = call.open + 1, min(call.close, len(toks))
    at_argument = True
    while k < stop:
        tok = toks[k]
        if tok.kind == "p" and tok.text in _JS_OPENERS:
            if tok.text == "{" and at_argument:
                hits.extend(_js_object_flags(toks, ends, k))
            k = max(ends[k], k) + 1
            at_argument = False
            continue
        at_argument = tok.kind == "p" and tok.text == ","
        k += 1
    return hits


def _js_object_flags(
    toks: Sequence[_JsTok], ends: Sequence[int], open_at: int
) -> list[tuple[int, str]]:
    """`skip`/`todo`/`only` keys of one object literal with a truthy value.

    `skip: false` (or null, undefined, 0) switches nothing off; any other
    value, a condition included, may skip, and so does shorthand `{ skip }`.
    """
    hits: list[tuple[int, str]] = []
    k, stop = open_at + 1, min(ends[open_at], len(toks))
    at_key = True
    while k < stop:
        tok = toks[k]
        if tok.kind == "p" and tok.text in _JS_OPENERS:
            k = max(ends[k], k) + 1
            at_key = False
            continue
        key = _js_key(tok) if at_key else None
        if key in _JS_OPTION_KEYS and _js_flag_set(toks, k + 1, stop):
            hits.append((tok.line, _JS_OPTION_KEYS[key]))
        at_key = tok.kind == "p" and tok.text == ","
        k += 1
    return hits


def _js_key(tok: _JsTok) -> str | None:
    """A property key's name: `skip` or `'skip'`."""
    if tok.kind == "id":
        return tok.text
    if tok.kind == "str":
        return _js_literal_value(tok)
    return None


def _js_flag_set(toks: Sequence[_JsTok], k: int, stop: int) -> bool:
    """Whether the key just before token k is given a possibly-true value."""
    if k >= stop:
        return True  # shorthand `{ skip }` closing the object
    if _is_p(toks, k, ","):
        return True  # shorthand `{ skip, ... }`
    if not _is_p(toks, k, ":") or k + 1 >= stop:
        return False
    value = toks[k + 1]
    ends_there = k + 2 >= stop or _is_p(toks, k + 2, ",")
    return not (value.text in _JS_FALSY and ends_there)


# --------------------------------------------------------------------------
# Line diff
# --------------------------------------------------------------------------


def added_lines(old: str, new: str) -> set[int]:
    """1-based numbers of the lines of `new` that `old` does not account for.

    The common head and tail are trimmed before `SequenceMatcher` runs, so a
    small edit to a huge file costs a scan, not a quadratic match.
    """
    a, b = old.split("\n"), new.split("\n")
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    middle_a, middle_b = a[head:len(a) - tail], b[head:len(b) - tail]
    if not middle_b:
        return set()
    if not middle_a:
        return set(range(head + 1, head + len(middle_b) + 1))
    matcher = SequenceMatcher(None, middle_a, middle_b, autojunk=False)
    out: set[int] = set()
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            out.update(range(head + j1 + 1, head + j2 + 1))
    return out


# --------------------------------------------------------------------------
# The change as a whole
# --------------------------------------------------------------------------


@dataclass
class _Analysis:
    """One side of a file: its test definitions and all its markers."""

    defs: list[TestDef]
    markers: list[MarkerHit]


def _analyze(language: Language, path: str, text: str, *, markers: bool) -> _Analysis:
    """Definitions (and, when asked, markers) of one file version.

    Lexes once per version: the JS tokens, or the Python tokens when either
    the marker search or a file that fails to parse needs them.
    """
    if language == "js":
        toks = _lex_js(text)
        ends = _match_brackets(toks)
        hits = (
            _hits_with_text(_js_marker_hits(toks, ends), text)
            if markers and _JS_MARKER_HINT.search(text) else []
        )
        return _Analysis(_js_defs_from(path, toks, ends), hits)
    py_toks: list[_PyTok] | None = None
    defs: list[TestDef] = []
    if "test" in text:
        tree = _parse_python(text)
        if tree is not None:
            defs = _ast_test_defs(path, tree)
        else:
            py_toks = _python_tokens(text)
            defs = _token_test_defs(path, py_toks, text.split("\n"))
    hits: list[MarkerHit] = []
    if markers and _PY_MARKER_HINT.search(text):
        if py_toks is None:
            py_toks = _python_tokens(text)
        hits = _hits_with_text(_python_marker_hits(py_toks), text)
    return _Analysis(defs, hits)


class _Side(NamedTuple):
    """One version of a changed file: path, language (None: not scanned),
    text (None: absent)."""

    path: str
    language: Language | None
    text: str | None


def _sides(change: FileChange) -> tuple[_Side, _Side]:
    """The old and new versions of a change; absent ones have no text."""
    old_path = change.old_path or change.new_path or ""
    new_path = change.new_path or change.old_path or ""
    old_text = (
        _decode(change.old_data)
        if change.kind != "add" and change.old_data is not None else None
    )
    new_text = (
        _decode(change.new_data)
        if change.kind != "delete" and change.new_data is not None else None
    )
    return (
        _Side(old_path, language_of(old_path), old_text),
        _Side(new_path, language_of(new_path), new_text),
    )


def _unmatched(mine: Sequence[TestDef], theirs: Sequence[TestDef]) -> list[TestDef]:
    """Definitions in `mine` beyond the count of same-named ones in `theirs`.

    A multiset difference keyed by name: a file defining `test_a` twice
    whose new version defines it once has lost one.
    """
    budget = Counter(d.name for d in theirs)
    out: list[TestDef] = []
    for d in mine:
        if budget[d.name] > 0:
            budget[d.name] -= 1
        else:
            out.append(d)
    return out


@dataclass
class _Totals:
    """What the scan has found so far, file by file."""

    removed: list[TestDef] = field(default_factory=list)
    added: list[TestDef] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    files: int = 0


def scan_changes(
    changes: Iterable[FileChange],
    is_test_file: Callable[[str], bool] = looks_like_test_file,
) -> DiffScan:
    """Removed and added test definitions, and markers on added lines.

    Only files whose old or new path `is_test_file` accepts, in Python or
    JS/TS, are read. Each file is compared with its own previous version
    (a rename keeps its pair), so a renamed file with the same tests removes
    nothing; a test moved between two unrelated files counts as one removed
    and one added.
    """
    totals = _Totals()
    for change in changes:
        _scan_one(change, is_test_file, totals)
    return DiffScan(
        removed=tuple(totals.removed),
        added=tuple(totals.added),
        markers=tuple(totals.markers),
        files_scanned=totals.files,
    )


def _scan_one(
    change: FileChange, is_test_file: Callable[[str], bool], totals: _Totals
) -> None:
    """Add one changed file's findings to the totals."""
    paths = {p for p in (change.old_path, change.new_path) if p}
    if not any(language_of(p) for p in paths):
        return
    if not any(is_test_file(p) for p in paths):
        return
    old, new = _sides(change)
    totals.files += 1
    if old.text == new.text and old.language == new.language:
        return  # a pure rename, or a mode change: nothing to compare
    old_defs = (
        _analyze(old.language, old.path, old.text, markers=False).defs
        if old.language and old.text is not None else []
    )
    if new.language and new.text is not None:
        found = _analyze(new.language, new.path, new.text, markers=True)
        totals.markers.extend(_new_markers(new.path, found.markers, old.text, new.text))
        new_defs = found.defs
    else:
        new_defs = []
    totals.removed.extend(_unmatched(old_defs, new_defs))
    totals.added.extend(_unmatched(new_defs, old_defs))


def _new_markers(
    path: str, hits: Sequence[MarkerHit], old_text: str | None, new_text: str
) -> list[Marker]:
    """The markers that sit on lines the change added.

    The line diff runs only when the new version has a marker at all, which
    keeps the usual file, with none, at the cost of one lexer pass.
    """
    if not hits:
        return []
    fresh = added_lines(old_text, new_text) if old_text is not None else None
    return [
        Marker(path, line, kind, text)
        for line, kind, text in hits
        if fresh is None or line in fresh
    ]
