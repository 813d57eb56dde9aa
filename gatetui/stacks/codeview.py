"""Source with comments and literal contents blanked: the scanners' lexer.

The diff checks must tell code from text: `@pytest.mark.skip` in code
switches a test off, the same words in a docstring, a comment or a template
string never count. Only a lexer that sees the whole file knows which is
which, so each file version becomes a `CodeView`, the source with comments
and literal contents blanked to spaces (same length, same line breaks),
built by regexes that run in C. A Python loop per token would be several
times slower, and a change can touch thousands of test files.

This module owns that layer: line endings made uniform, the Python view
(the JS/TS one is `jsview`'s), the questions asked of a view (lines, brackets, dotted chains,
literal values), and turning marker offsets into reported lines. What counts
as a test or a marker is `python_tests`' and `js_tests`' to say.

Pure: stdlib only, no I/O. Any input, however broken, yields a view and
never an exception, because the code being judged is often mid-edit.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable
from typing import ClassVar

from gatetui.stacks.testdefs import MarkerHit

__all__ = ["CodeView", "blanked", "hits_to_markers", "is_word_char", "normalize", "python_view"]


def normalize(text: str) -> str:
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


def blanked(text: str, first: str = "") -> str:
    """`text` as spaces, newlines kept, its first character set to `first`.

    Keeping length and line breaks keeps every offset and line number valid;
    keeping a quote where a literal opened still shows a value stood there.
    """
    blank = _NOT_NEWLINE.sub(" ", text) if "\n" in text else " " * len(text)
    return first + blank[len(first) :] if first else blank


def is_word_char(char: str) -> bool:
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


class CodeView:
    """A file's code: its source with comments and literal contents blanked.

    `literals` maps the offset where a string or template literal opens to
    the offset where it ends (JS only: test titles are read from them).
    `tail_lines` are lines on which a multi-line string ends: what follows
    the string there continues a statement rather than starting one.
    """

    def __init__(
        self, source: str, code: str, literals: dict[int, int] | None = None, tail_lines: frozenset[int] = frozenset()
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
        while start > 0 and is_word_char(self.code[start - 1]):
            start -= 1
        return self.code[start : index + 1], start

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
        if is_word_char(self.code[index]):
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


def python_view(source: str) -> CodeView:
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
        return blanked(text, '"')

    code = _PY_NOISE.sub(blank, source)
    view = CodeView(source, code)
    view.tail_lines = frozenset(view.line_of(end) for end in tail_ends)
    return view


def hits_to_markers(view: CodeView, hits: Iterable[tuple[int, str]]) -> list[MarkerHit]:
    """(line, kind, text) per distinct (offset's line, kind), in line order.

    Two markers of one kind on one line are one edit, reported once.
    """
    found = sorted({(view.line_of(offset), kind) for offset, kind in sorted(hits)})
    if not found:
        return []
    lines = view.source.split("\n")
    return [(line, kind, lines[line - 1].strip()) for line, kind in found]
