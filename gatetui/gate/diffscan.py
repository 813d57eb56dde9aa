"""Read a change's test files for removed tests and newly switched-off ones.

Two gate checks answer from the diff alone, in milliseconds, before anything
runs: `tests_kept` (did the change delete more test definitions than it
added?) and `no_new_skips` (did an added line skip a test, expect it to fail,
or focus the run on a few tests?). These are the cheapest ways to turn a red
suite green without fixing anything, so they are worth catching without
executing a line of the code.

The scanner reads whole file contents, not diff hunks: only a lexer that sees
the whole file knows whether `@pytest.mark.skip` sits in code or inside a
docstring, a comment or a template string, and text in strings and comments
never counts. A line diff is still taken, but only to learn which lines of
the new file were added, since a marker that was already there is not new.

How: each file becomes a `_CodeView`, the source with comments and literal
contents blanked to spaces (same length, same line breaks), built by regexes
that run in C. Definitions and markers are then patterns in that code,
examined only where a candidate word occurs. A Python loop per token would
be several times slower, and a change can touch thousands of test files.

Pure: stdlib only, no I/O. Any input, however broken, yields an answer and
never an exception, because the code being judged is often mid-edit.
"""

from __future__ import annotations

import ast
import re
import warnings
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import ClassVar, Literal, NamedTuple

from gatetui.changes import FileChange

__all__ = [
    "JS_SUFFIXES",
    "PY_SUFFIXES",
    "DiffScan",
    "Marker",
    "MarkerHit",
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

    __test__: ClassVar[bool] = False  # a record, not a pytest test class

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
    files_scanned: int = 0  # test files in the change that were read

    def tests_kept_ok(self) -> bool:
        """True unless the change removed more tests than it added.

        Counting rather than matching names lets a renamed test pass: its
        old name is removed and its new one added, a net of zero.
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
        if len(self.removed) > limit:
            names.append(f"and {len(self.removed) - limit} more")
        return f"{head}: {', '.join(names)}"

    def skips_detail(self, limit: int = 5) -> str:
        """The new markers, each as `path:line kind: text`, for the check."""
        if not self.markers:
            return "no new skip, xfail or focus markers"
        count = len(self.markers)
        parts = [m.describe() for m in self.markers[:limit]]
        if count > limit:
            parts.append(f"and {count - limit} more")
        noun = "marker" if count == 1 else "markers"
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
    read, so a `.skip(` in application code is never taken for a marker.
    """
    parts = path.replace("\\", "/").split("/")
    name, dirs = parts[-1], {p.lower() for p in parts[:-1]}
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
        return bool(inner & {"test", "spec"}) or not dirs.isdisjoint(_JS_TEST_DIRS)
    return False


def _decode(data: bytes) -> str:
    """File bytes as text, undecodable bytes replaced, newlines normalized."""
    return _normalize(data.decode("utf-8", errors="replace"))


def _normalize(text: str) -> str:
    """Drop a BOM and turn `\\r\\n` and lone `\\r` into `\\n`.

    Line numbers from `ast`, the code views and the line diff only agree
    when every line ends the same way.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


# --------------------------------------------------------------------------
# Code views: source with comments and literals blanked
# --------------------------------------------------------------------------

_NOT_NEWLINE = re.compile(r"[^\n]")
_PARENS = re.compile(r"[()]")


def _blank(text: str, first: str = "") -> str:
    """`text` as spaces, newlines kept, its first character set to `first`.

    Keeping length and line breaks keeps every offset and line number valid;
    keeping a quote where a literal opened still shows a value stood there.
    """
    blank = _NOT_NEWLINE.sub(" ", text) if "\n" in text else " " * len(text)
    return first + blank[len(first):] if first else blank


def _is_word_char(char: str) -> bool:
    """Whether a character can be part of an identifier (`$` for JS).

    "" (outside the file) is not one, though `"" in "_$"` would say so.
    """
    return char.isalnum() or char == "_" or char == "$"


class _Brackets:
    """Which bracket closes which, and which encloses which, in code.

    Built on demand, since only some questions need it. A bracket left open
    runs to the end of the file. A stray closer closes only an opener among
    the few innermost, so mis-read broken code cannot make this quadratic.
    """

    _PAIRS: ClassVar[dict[str, str]] = {")": "(", "]": "[", "}": "{"}
    _FIND: ClassVar[re.Pattern[str]] = re.compile(r"[()\[\]{}]")

    def __init__(self, code: str) -> None:
        self.opens: list[int] = []
        self.close: dict[int, int] = {}
        self.parent: dict[int, int] = {}
        stack: list[int] = []
        for match in self._FIND.finditer(code):
            at = match.start()
            want = self._PAIRS.get(code[at])
            if want is None:
                self.parent[at] = stack[-1] if stack else -1
                self.opens.append(at)
                stack.append(at)
            elif stack and code[stack[-1]] == want:
                self.close[stack.pop()] = at
            else:
                self._close_stray(code, stack, want, at)
        for opener in stack:
            self.close[opener] = len(code)

    def _close_stray(self, code: str, stack: list[int], want: str, at: int) -> None:
        """A closer that does not match the innermost opener: close the
        nearest matching one among the few innermost (and everything inside
        it), or ignore the closer."""
        for depth in range(len(stack) - 1, max(len(stack) - 9, -1), -1):
            if code[stack[depth]] == want:
                for opener in stack[depth:]:
                    self.close[opener] = at
                del stack[depth:]
                return

    def enclosing(self, offset: int) -> int:
        """The innermost opener whose brackets contain `offset`, or -1."""
        index = bisect_left(self.opens, offset) - 1
        opener = self.opens[index] if index >= 0 else -1
        while opener >= 0 and self.close[opener] < offset:
            opener = self.parent[opener]
        return opener


class _CodeView:
    """A file's code: its source with comments and literal contents blanked.

    `literals` maps the offset where a string or template literal opens to
    the offset where it ends (JS only: test titles are read from them).
    `tail_lines` are lines on which a multi-line string ends: what follows
    the string there continues a statement rather than starting one.
    """

    def __init__(
        self,
        source: str,
        code: str,
        literals: dict[int, int] | None = None,
        tail_lines: frozenset[int] = frozenset(),
    ) -> None:
        self.source = source
        self.code = code
        self.literals = literals or {}
        self.tail_lines = tail_lines
        self._line_cursor = (0, 1)  # (offset, its line): lines are asked in order
        self._brackets: _Brackets | None = None
        self._paren_close: dict[int, int] | None = None

    @property
    def brackets(self) -> _Brackets:
        """Bracket pairs of the code, computed the first time they are asked."""
        if self._brackets is None:
            self._brackets = _Brackets(self.code)
        return self._brackets

    @property
    def paren_close(self) -> dict[int, int]:
        """Where each "(" closes: the one bracket kind calls need, found in
        a tighter loop than `brackets`. Unclosed ones are absent."""
        if self._paren_close is None:
            close: dict[int, int] = {}
            stack: list[int] = []
            code = self.code
            for match in _PARENS.finditer(code):
                at = match.start()
                if code[at] == "(":
                    stack.append(at)
                elif stack:
                    close[stack.pop()] = at
            self._paren_close = close
        return self._paren_close

    def line_of(self, offset: int) -> int:
        """The 1-based line holding `offset`.

        Counting newlines from the previous answer keeps a file's worth of
        questions, asked in order, linear.
        """
        last, line = self._line_cursor
        if offset < last:
            last, line = 0, 1
        line += self.source.count("\n", last, offset)
        self._line_cursor = (offset, line)
        return line

    def char(self, index: int) -> str:
        """The code character at `index`, or "" outside the file."""
        return self.code[index] if 0 <= index < len(self.code) else ""

    def before(self, offset: int) -> int:
        """Index of the last non-space code character before `offset`, or -1."""
        code, index = self.code, offset - 1
        while index >= 0 and code[index].isspace():
            index -= 1
        return index

    def after(self, offset: int) -> int:
        """Index of the first non-space code character from `offset` on."""
        code, index = self.code, offset
        while index < len(code) and code[index].isspace():
            index += 1
        return index

    def word_ending_at(self, index: int) -> tuple[str, int]:
        """The identifier whose last character is at `index`, and its start."""
        start = index + 1
        while start > 0 and _is_word_char(self.code[start - 1]):
            start -= 1
        return self.code[start:index + 1], start

    def chain_before(self, dot: int) -> tuple[list[str], int, bool]:
        """Names of a dotted chain ending at the `.` at index `dot`.

        Returns the names (leftmost first), the offset of the leftmost, and
        whether the chain is bare: not itself the attribute of something
        else like a call result, so `foo().skip` does not look like `skip`.
        """
        names: list[str] = []
        start = dot + 1
        while self.char(dot) == ".":
            name, start = self.word_ending_at(self.before(dot))
            if not name or name[0].isdigit():
                return names[::-1], start, False
            names.append(name)
            dot = self.before(start)
        return names[::-1], start, True

    def prev_token(self, offset: int) -> str:
        """The word or character just before `offset`: `@`, `raise`, `.`..."""
        index = self.before(offset)
        if index < 0:
            return ""
        if _is_word_char(self.code[index]):
            return self.word_ending_at(index)[0]
        return self.code[index]


# String prefixes (r, b, f...) are left as code: they never change where a
# string ends, and a pattern that could start on any letter would be slow.
_PY_NOISE = re.compile(
    r"\#[^\n]*"
    r"|'''(?:[^'\\]|\\[\s\S]|'(?!''))*(?:'''|\Z)"
    r'|"""(?:[^"\\]|\\[\s\S]|"(?!""))*(?:"""|\Z)'
    r"|'(?:[^'\\\n]|\\[\s\S])*(?:'|(?=\n)|\Z)"
    r'|"(?:[^"\\\n]|\\[\s\S])*(?:"|(?=\n)|\Z)'
)


def _python_view(source: str) -> _CodeView:
    """Python code with comments and strings blanked; never raises.

    An unterminated one-line string ends at its line's end and an
    unterminated triple-quoted one at the file's, as in Python's tokenizer.
    """
    tail_ends: list[int] = []

    def blank(match: re.Match[str]) -> str:
        text = match.group()
        if text[0] == "#":
            return " " * len(text)
        if "\n" in text:
            tail_ends.append(match.end())
        return _blank(text, '"')

    code = _PY_NOISE.sub(blank, source)
    view = _CodeView(source, code)
    view.tail_lines = frozenset(view.line_of(end) for end in tail_ends)
    return view


_JS_NOISE = (
    r"//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)"
    r"|'(?:[^'\\\n]|\\[\s\S])*'?"
    r'|"(?:[^"\\\n]|\\[\s\S])*"?'
)
_JS_NOISE_TOP = re.compile(_JS_NOISE + r"|[`/]")
_JS_NOISE_IN_HOLE = re.compile(_JS_NOISE + r"|[`/{}]")  # inside `${ }`
_JS_REGEX = re.compile(r"/(?![*/])(?:[^/\\\[\n]|\\.|\[(?:[^\]\\\n]|\\.)*\])+/\w*")
_JS_TEMPLATE_TEXT = re.compile(r"(?:[^`\\$]|\\[\s\S]|\$(?!\{))*")
_JS_ESCAPE = re.compile(r"\\([\s\S])")
_JS_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\n": ""}
# After these words a "/" opens a regex literal; after other words, a
# literal or a closing bracket it divides.
_JS_WORDS_BEFORE_REGEX = frozenset({
    "return", "typeof", "instanceof", "in", "of", "new", "delete", "void",
    "throw", "case", "do", "else", "yield", "await",
})


class _JsViewBuilder:
    """Blanks a JS/TS file's comments, strings, templates and regexes.

    Template literals nest: code inside `${ }` stays code (it runs) and may
    hold templates of its own, so each open `${` is kept on a stack with the
    depth of plain `{ }` inside it. Whether a "/" opens a regex or divides
    depends on what precedes it, judged by the usual heuristic.

    This is the one loop in the scanner that runs once per string in a
    file, so it does little per string: record where it ends, blank it.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.parts: list[str] = []
        self.literals: dict[int, int] = {}
        self.comments: list[tuple[int, int]] = []  # for the "/" heuristic
        self.holes: list[list[int]] = []  # [brace depth, template start]
        self.copied = 0

    def build(self) -> _CodeView:
        """Run over the file once and return its view."""
        source, literals, holes = self.source, self.literals, self.holes
        pos = 0
        if source.startswith("#!"):  # a hashbang line is no code
            newline = source.find("\n")
            pos = self._blank(0, newline if newline >= 0 else len(source))
        while True:
            match = (_JS_NOISE_IN_HOLE if holes else _JS_NOISE_TOP).search(source, pos)
            if match is None:
                break
            start, pos = match.span()
            char = source[start]
            if char == "'" or char == '"':
                literals[start] = pos
                self.parts.append(source[self.copied:start])
                self.parts.append(
                    '"' + " " * (pos - start - 1)
                    if source.count("\n", start, pos) == 0
                    else _blank(source[start:pos], '"')
                )
                self.copied = pos
            elif char == "`":
                pos = self._template_text(start, start)
            elif char == "/":
                pos = self._slash(start, pos)
            elif char == "{":
                holes[-1][0] += 1
            elif char == "}":
                if holes[-1][0]:
                    holes[-1][0] -= 1
                else:  # the "}" ending a `${ }`
                    pos = self._template_text(holes.pop()[1], start)
        self.parts.append(source[self.copied:])
        return _CodeView(source, "".join(self.parts), literals)

    def _blank(self, start: int, end: int, first: str = "") -> int:
        """Copy the code up to `start`, then source[start:end] blanked."""
        self.parts.append(self.source[self.copied:start])
        self.parts.append(_blank(self.source[start:end], first))
        self.copied = end
        return end

    def _slash(self, start: int, end: int) -> int:
        """A comment, a regex literal, or a division; where to go on."""
        if end - start > 1:  # the pattern matched a whole comment
            self.comments.append((start, end))
            return self._blank(start, end)
        regex = _JS_REGEX.match(self.source, start)
        if regex is None or not self._regex_may_start(start):
            return end
        return self._blank(start, regex.end(), "/")

    def _template_text(self, opened: int, start: int) -> int:
        """Blank a template's text up to a `${` or its closing backtick.

        `opened` is where the template's backtick is; `start` is that tick
        or the `}` ending a `${ }` inside it, and the text follows it.
        """
        source = self.source
        text = _JS_TEMPLATE_TEXT.match(source, start + 1)
        stop = text.end() if text else start + 1
        first = "`" if start == opened else ""
        if source.startswith("${", stop):
            self.holes.append([0, opened])
            return self._blank(start, stop + 2, first)
        end = min(stop + 1, len(source))
        self.literals[opened] = end
        return self._blank(start, end, first)

    def _regex_may_start(self, slash: int) -> bool:
        """Whether the code before a "/" lets it open a regex literal.

        It may after an operator, an opening bracket, a keyword such as
        `return`, or nothing; it may not after a name, a number, a closing
        bracket or a literal, where "/" divides. Comments are looked past.
        """
        source, index = self.source, slash - 1
        comment = len(self.comments) - 1
        while True:
            while index >= 0 and source[index].isspace():
                index -= 1
            while comment >= 0 and self.comments[comment][0] > index:
                comment -= 1
            if comment >= 0 and self.comments[comment][1] > index:
                index = self.comments[comment][0] - 1
                continue
            break
        if index < 0:
            return True
        char = source[index]
        if _is_word_char(char):
            begin = index
            while begin > 0 and _is_word_char(source[begin - 1]):
                begin -= 1
            return source[begin:index + 1] in _JS_WORDS_BEFORE_REGEX
        return char not in ")]}'\"`"


def _js_literal_value(view: _CodeView, start: int) -> str:
    """The text of the literal opening at `start`, as a test title needs it.

    Strings are unescaped; templates are kept raw, `${...}` and all.
    """
    end = view.literals[start]
    quote = view.source[start]
    body = view.source[start + 1:end]
    if body.endswith(quote) and not _escaped_end(body):
        body = body[:-1]
    if quote == "`":
        return body
    return _JS_ESCAPE.sub(lambda m: _JS_ESCAPES.get(m.group(1), m.group(1)), body)


def _escaped_end(body: str) -> bool:
    """Whether the last character of `body` is escaped by a backslash."""
    count = len(body) - 1 - len(body[:-1].rstrip("\\"))
    return count % 2 == 1


def _js_view(source: str) -> _CodeView:
    """JS/TS code with comments, strings, templates and regexes blanked."""
    return _JsViewBuilder(source).build()


def _hits_to_markers(view: _CodeView, hits: Iterable[tuple[int, str]]) -> list[MarkerHit]:
    """(line, kind, text) per distinct (offset's line, kind), in line order.

    Two markers of one kind on one line are one edit, reported once.
    """
    found = sorted({(view.line_of(offset), kind) for offset, kind in sorted(hits)})
    if not found:
        return []
    lines = view.source.split("\n")
    return [(line, kind, lines[line - 1].strip()) for line, kind in found]


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
    return _python_defs(path, _normalize(source))[0]


def _python_defs(path: str, text: str) -> tuple[list[TestDef], _CodeView | None]:
    """Definitions of normalized text, and the view if one had to be built
    (the marker search can then reuse it)."""
    if "test" not in text:
        return [], None
    tree = _parse_python(text)
    if tree is not None:
        return _ast_test_defs(path, tree), None
    view = _python_view(text)
    return _view_test_defs(path, view), view


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
                out.append(TestDef(path, "::".join((*classes, node.name)), node.lineno))
        elif isinstance(node, ast.ClassDef):
            _collect_ast_defs(path, node.body, (*classes, node.name), out)
        else:
            for block in _child_blocks(node):
                _collect_ast_defs(path, block, classes, out)


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


def _view_test_defs(path: str, view: _CodeView) -> list[TestDef]:
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
        starts = number not in view.tail_lines and (
            (depth == 0 and not continued) or opened is not None
        )
        if starts:
            depth = 0
            indent = len(text[:len(text) - len(text.lstrip())].expandtabs(8))
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
_PY_PYTEST_CALLS: dict[str, str] = {
    "skip": "skip", "importorskip": "skip", "xfail": "xfail",
}
_PY_UNITTEST_DECORATORS: dict[str, str] = {
    "skip": "skip", "skipIf": "skip", "skipUnless": "skip",
    "expectedFailure": "xfail",
}
# Every marker's chain holds one of these words, or an alias of one bound by
# an import (which then joins the search).
_PY_MARKER_WORDS = (
    "skip", "skipif", "xfail", "importorskip", "skipIf", "skipUnless",
    "expectedFailure", "SkipTest", "skipTest",
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
    decorators: dict[str, str] = field(
        default_factory=lambda: dict(_PY_UNITTEST_DECORATORS)
    )
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
        return {
            *_PY_MARKER_WORDS, *self.mark, *self.calls, *self.decorators,
            *self.skip_test,
        }


def _python_imports(code: str) -> _PyNames:
    """The pytest/unittest names bound by the file's import statements:
    `import pytest as pt`, `from unittest import skip as sk` and the like."""
    names = _PyNames()
    for match in _PY_IMPORT.finditer(code):
        line_start = code.rfind("\n", 0, match.start()) + 1
        prefix = code[line_start:match.start()]
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
    return _python_markers(_normalize(source), None)


def _python_markers(text: str, view: _CodeView | None) -> list[MarkerHit]:
    """Markers of normalized text, reusing its view when there is one.

    A file without a marker word, which is most of them, is not lexed.
    """
    if not _PY_MARKER_HINT.search(text):
        return []
    view = view or _python_view(text)
    return _hits_to_markers(view, _python_marker_hits(view))


def _python_marker_hits(view: _CodeView) -> list[tuple[int, str]]:
    """(offset, kind) for each dotted name that is a marker where it stands."""
    code = view.code
    names = _python_imports(code) if "import" in code else _PyNames()
    words = sorted(names.words(), key=len, reverse=True)
    search = re.compile("(?:" + "|".join(map(re.escape, words)) + r")(?!\w)")
    hits: list[tuple[int, str]] = []
    seen: set[int] = set()
    for match in search.finditer(code):
        if _is_word_char(view.char(match.start() - 1)):
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


def _classify_python(
    chain: list[str], prev: str, after: str, names: _PyNames, bare: bool
) -> str | None:
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


# --------------------------------------------------------------------------
# JS/TS: test definitions
# --------------------------------------------------------------------------

_JS_TEST_FUNCS = frozenset({"it", "test", "specify", "xit", "xtest", "xspecify", "fit"})
_JS_SUITE_FUNCS = frozenset({
    "describe", "suite", "context", "xdescribe", "xcontext", "fdescribe",
})
_JS_CALLEES = re.compile(
    r"(?:"
    + "|".join(sorted(_JS_TEST_FUNCS | _JS_SUITE_FUNCS, key=len, reverse=True))
    + r")(?![\w$])"
)
# Modifiers that leave a call a definition (`it.skip("t", fn)` is still a
# test, one the marker check reports); `it.todo("t")` is only a placeholder.
_JS_DEF_MODIFIERS = frozenset({
    "only", "skip", "concurrent", "sequential", "each", "skipIf", "runIf",
    "fixme", "fails", "failing",
})
# Modifiers taking arguments of their own before the test's own call:
# `it.each(table)("title", fn)`, `test.skipIf(cond)("title", fn)`.
_JS_ARG_MODIFIERS = frozenset({"each", "skipIf", "runIf"})
_JS_MODIFIER = re.compile(r"\s*\.\s*([A-Za-z_$][\w$]*)")


class _JsCall(NamedTuple):
    """`name.mod1.mod2(...)`: the callee's modifiers and the title's "("."""

    mods: tuple[str, ...]
    open: int


def _js_call(view: _CodeView, name_end: int) -> _JsCall | None:
    """The call made by the name ending at `name_end`, through `.modifier`s."""
    code, pos = view.code, name_end
    mods: list[str] = []
    while (modifier := _JS_MODIFIER.match(code, pos)) is not None:
        mods.append(modifier.group(1))
        pos = modifier.end()
        if mods[-1] in _JS_ARG_MODIFIERS:
            nxt = view.after(pos)
            if view.char(nxt) == "(":
                pos = view.paren_close.get(nxt, len(code)) + 1
            elif nxt in view.literals:  # it.each`table`
                pos = view.literals[nxt]
    opener = view.after(pos)
    if view.char(opener) != "(":
        return None
    return _JsCall(tuple(mods), opener)


def _js_title(view: _CodeView, call: _JsCall) -> str | None:
    """The call's first argument when it is a string or template literal."""
    first = view.after(call.open + 1)
    return _js_literal_value(view, first) if first in view.literals else None


def _js_is_bare(view: _CodeView, start: int) -> bool:
    """Whether the name at `start` is no property: `regex.test(` is no test."""
    return view.char(view.before(start)) != "."


def js_test_defs(path: str, source: str) -> list[TestDef]:
    """Test definitions in a JS/TS file, in source order.

    A definition is a call of `it`/`test` (or `specify`, `xit`, `fit`...),
    bare or through `.only`/`.skip`/`.concurrent`/`.each(...)`, whose first
    argument is a string or template literal. `foo.test(` is a method call,
    not a test. Names carry their describe blocks: "math > adds".
    """
    return _js_defs(path, _js_view(_normalize(source)))


def _js_defs(path: str, view: _CodeView) -> list[TestDef]:
    """Test definitions from a view, tracking the describe blocks open."""
    out: list[TestDef] = []
    suites: list[tuple[int, str]] = []  # (offset of the closing ")", title)
    for match in _JS_CALLEES.finditer(view.code):
        start = match.start()
        if _is_word_char(view.char(start - 1)):
            continue  # the tail of a longer name
        while suites and suites[-1][0] < start:
            suites.pop()
        if not _js_is_bare(view, start):
            continue
        call = _js_call(view, match.end())
        if call is None or not _JS_DEF_MODIFIERS.issuperset(call.mods):
            continue
        title = _js_title(view, call)
        if title is None:
            continue
        if match.group() in _JS_TEST_FUNCS:
            name = " > ".join([t for _, t in suites] + [title])
            out.append(TestDef(path, name, view.line_of(start)))
        else:
            suites.append((view.paren_close.get(call.open, len(view.code)), title))
    return out


# --------------------------------------------------------------------------
# JS/TS: markers
# --------------------------------------------------------------------------

_JS_MARK_BASES = frozenset({"it", "test", "describe", "suite", "context", "specify"})
_JS_MODIFIER_KINDS: dict[str, str] = {
    "only": "focus", "skip": "skip", "todo": "skip", "skipIf": "skip",
    "runIf": "skip", "fixme": "skip",  # Playwright's skip
    "fails": "xfail", "failing": "xfail", "fail": "xfail",  # vitest, jest, Playwright
}
_JS_PREFIXED: dict[str, str] = {
    "xit": "skip", "xtest": "skip", "xspecify": "skip", "xdescribe": "skip",
    "xcontext": "skip", "fit": "focus", "fdescribe": "focus",
}
_JS_OPTION_KEYS: dict[str, str] = {"skip": "skip", "todo": "skip", "only": "focus"}
_JS_OPTION_CALLEES = frozenset({"it", "test", "describe", "suite"})
# Receivers of a runtime skip: node:test's `t`, vitest's `ctx`/`context`,
# mocha's `this`. `stream.skip(3)` has none of them, so it is no marker.
_JS_SKIP_RECEIVERS = frozenset({"t", "ctx", "context", "this"})
_JS_MARK_WORD = re.compile(
    r"(?:"
    + "|".join(sorted({*_JS_MODIFIER_KINDS, *_JS_PREFIXED}, key=len, reverse=True))
    + r")(?![\w$])"
)
_JS_MARKER_HINT = re.compile("|".join({*_JS_MODIFIER_KINDS, *_JS_PREFIXED}))
_JS_CALL_FOLLOWS = re.compile(r"(?:\s*\.\s*[\w$]+)*\s*[(`]")
_JS_FALSY_VALUE = re.compile(r"\s*(?:false|null|undefined|0)\s*[,}]")


def js_markers(source: str) -> list[MarkerHit]:
    """Every skip/focus marker in a JS/TS file's code, as (line, kind, text).

    `.only`, `.skip`, `.todo`, `.skipIf`, `.runIf` on it/test/describe/
    suite/context, `xit`/`xdescribe`/`fit`/`fdescribe` and kin, node:test
    options `{ skip: true }`/`{ todo: ... }`/`{ only: true }` given to a
    test, and `t.skip()`/`this.skip()`. Never text in strings, templates or
    comments, and never `.skip(` on other objects.
    """
    return _js_markers(_normalize(source), None)


def _js_markers(text: str, view: _CodeView | None) -> list[MarkerHit]:
    """Markers of normalized text, reusing its view when there is one."""
    if not _JS_MARKER_HINT.search(text):
        return []
    view = view or _js_view(text)
    return _hits_to_markers(view, _js_marker_hits(view))


def _js_marker_hits(view: _CodeView) -> list[tuple[int, str]]:
    """(offset, kind) for each marker word that is a marker where it stands."""
    hits: list[tuple[int, str]] = []
    for match in _JS_MARK_WORD.finditer(view.code):
        word, start, end = match.group(), match.start(), match.end()
        if _is_word_char(view.char(start - 1)):
            continue  # the tail of a longer name
        dot = view.before(start)
        if word in _JS_PREFIXED:
            call = _js_call(view, end) if view.char(dot) != "." else None
            if call is not None and _js_title(view, call) is not None:
                hits.append((start, _JS_PREFIXED[word]))
        elif view.char(dot) == ".":
            kind = _js_modifier_kind(view, word, dot, end)
            if kind is not None:
                hits.append((start, kind))
        elif word in _JS_OPTION_KEYS and _js_option_set(view, start, end):
            hits.append((start, _JS_OPTION_KEYS[word]))
    return hits


def _js_modifier_kind(view: _CodeView, word: str, dot: int, end: int) -> str | None:
    """The kind of `.only`/`.skip`/... given what it is a member of.

    `it.only(`, `describe.skip.each(...)(`, `test.skipIf(c)(`: a chain on a
    bare test function, ending in a call. `t.skip()`, `this.skip()`: a
    runtime skip on a test context.
    """
    chain, _, bare = view.chain_before(dot)
    if not bare or not chain:
        return None
    if (
        len(chain) == 1 and chain[0] in _JS_SKIP_RECEIVERS
        and word in ("skip", "todo") and view.char(view.after(end)) == "("
    ):
        return "skip"
    if chain[0] in _JS_MARK_BASES and _JS_CALL_FOLLOWS.match(view.code, end):
        return _JS_MODIFIER_KINDS[word]
    return None


def _js_option_set(view: _CodeView, start: int, end: int) -> bool:
    """Whether `skip`/`todo`/`only` here is a true option of a test call.

    It must be a key (`{ skip: cond }`, or shorthand `{ skip }`) whose value
    is not plainly false, of an object literal passed straight to it/test/
    describe/suite or to a node subtest `t.test(...)`; an object inside the
    test's body is just data.
    """
    code = view.code
    if view.char(view.before(start)) not in ("{", ","):
        return False
    nxt = view.after(end)
    if view.char(nxt) not in (":", ",", "}"):
        return False
    if view.char(nxt) == ":" and _JS_FALSY_VALUE.match(code, nxt + 1):
        return False
    brackets = view.brackets
    obj = brackets.enclosing(start)
    if view.char(obj) != "{" or view.char(view.before(obj)) not in ("(", ","):
        return False
    call = brackets.parent.get(obj, -1)
    if view.char(call) != "(":
        return False
    name, name_start = view.word_ending_at(view.before(call))
    if name not in _JS_OPTION_CALLEES:
        return False
    if _js_is_bare(view, name_start):
        return True
    receiver, _, _ = view.chain_before(view.before(name_start))
    return name == "test" and receiver == ["t"]


# --------------------------------------------------------------------------
# Line diff
# --------------------------------------------------------------------------


# Past this many line pairs, SequenceMatcher (exact, but near-quadratic on
# repetitive lines such as "}" or blanks: 8,000 of them take seconds) gives
# way to counting lines. About 0.1 s in the worst case.
_EXACT_DIFF_BUDGET = 1_000_000


def added_lines(old: str, new: str) -> set[int]:
    """1-based numbers of the lines of `new` that `old` does not account for.

    The common head and tail are trimmed first, so a small edit to a huge
    file costs a scan. What remains is matched by `SequenceMatcher` when it
    is small enough; otherwise a line of `new` counts as added when `old`
    has no unused copy of it, which is linear and errs only on lines moved
    within the middle, which it takes for unchanged.
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
    if len(middle_a) * len(middle_b) > _EXACT_DIFF_BUDGET:
        return {head + 1 + index for index in _unmatched_lines(middle_a, middle_b)}
    matcher = SequenceMatcher(None, middle_a, middle_b, autojunk=False)
    out: set[int] = set()
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            out.update(range(head + j1 + 1, head + j2 + 1))
    return out


def _unmatched_lines(old: Sequence[str], new: Sequence[str]) -> list[int]:
    """Indexes of lines of `new` left over once each old line is used once."""
    available = Counter(old)
    out: list[int] = []
    for index, line in enumerate(new):
        if available[line] > 0:
            available[line] -= 1
        else:
            out.append(index)
    return out


# --------------------------------------------------------------------------
# The change as a whole
# --------------------------------------------------------------------------


class _FileScan(NamedTuple):
    """One file version's test definitions and markers."""

    defs: list[TestDef]
    markers: list[MarkerHit]


def _scan_file(language: Language, path: str, text: str, *, markers: bool) -> _FileScan:
    """Definitions and (when asked) markers of one normalized version,
    lexing it at most once."""
    if language == "js":
        view = _js_view(text)
        return _FileScan(_js_defs(path, view), _js_markers(text, view) if markers else [])
    defs, py_view = _python_defs(path, text)
    return _FileScan(defs, _python_markers(text, py_view) if markers else [])


class _Side(NamedTuple):
    """One version of a changed file: path, language (None: not read) and
    text (None: absent)."""

    path: str
    language: Language | None
    text: str | None


def _side(path: str, data: bytes | None, present: bool) -> _Side:
    """One version of a file, read when it exists in that commit."""
    text = _decode(data) if present and data is not None else None
    return _Side(path, language_of(path), text)


def _sides(change: FileChange) -> tuple[_Side, _Side]:
    """The old and new versions of a change; an absent one has no text."""
    old_path = change.old_path or change.new_path or ""
    new_path = change.new_path or change.old_path or ""
    return (
        _side(old_path, change.old_data, change.kind != "add"),
        _side(new_path, change.new_data, change.kind != "delete"),
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


def scan_changes(
    changes: Iterable[FileChange],
    is_test_file: Callable[[str], bool] = looks_like_test_file,
) -> DiffScan:
    """Removed and added test definitions, and markers on added lines.

    Only files in Python or JS/TS whose old or new path `is_test_file`
    accepts are read. Each file is compared with its own previous version (a
    rename keeps its pair), so a renamed file with the same tests removes
    nothing; a test moved between two unrelated files counts as one removed
    and one added. Deleted files bring no markers; added files bring all.
    """
    removed: list[TestDef] = []
    added: list[TestDef] = []
    markers: list[Marker] = []
    files = 0
    for change in changes:
        paths = [p for p in (change.old_path, change.new_path) if p]
        if not any(map(language_of, paths)) or not any(map(is_test_file, paths)):
            continue
        files += 1
        old, new = _sides(change)
        if old.text == new.text and old.language == new.language:
            continue  # a pure rename: nothing to compare
        before, after = _scan_side(old, markers=False), _scan_side(new, markers=True)
        removed.extend(_unmatched(before.defs, after.defs))
        added.extend(_unmatched(after.defs, before.defs))
        markers.extend(_new_markers(new.path, after.markers, old.text, new.text))
    return DiffScan(tuple(removed), tuple(added), tuple(markers), files)


def _scan_side(side: _Side, *, markers: bool) -> _FileScan:
    """A file version's findings; none when absent or in no known language."""
    if side.language is None or side.text is None:
        return _FileScan([], [])
    return _scan_file(side.language, side.path, side.text, markers=markers)


def _new_markers(
    path: str, hits: Sequence[MarkerHit], old_text: str | None, new_text: str | None
) -> list[Marker]:
    """The markers that sit on lines the change added.

    The line diff runs only when the new version has a marker at all, so
    the usual file, with none, costs no diff.
    """
    if not hits or new_text is None:
        return []
    fresh = added_lines(old_text, new_text) if old_text is not None else None
    return [
        Marker(path, line, kind, text)
        for line, kind, text in hits
        if fresh is None or line in fresh
    ]
