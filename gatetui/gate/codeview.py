"""Source with comments and literal contents blanked: the scanners' lexer.

The diff checks must tell code from text: `@pytest.mark.skip` in code
switches a test off, the same words in a docstring, a comment or a template
string never count. Only a lexer that sees the whole file knows which is
which, so each file version becomes a `CodeView`, the source with comments
and literal contents blanked to spaces (same length, same line breaks),
built by regexes that run in C. A Python loop per token would be several
times slower, and a change can touch thousands of test files.

This module owns that layer: line endings made uniform, the Python and
JS/TS views, the questions asked of a view (lines, brackets, dotted chains,
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

from gatetui.gate.testdefs import MarkerHit

__all__ = [
    "CodeView",
    "hits_to_markers",
    "is_word_char",
    "js_literal_value",
    "js_view",
    "normalize",
    "python_view",
]


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


def _blank(text: str, first: str = "") -> str:
    """`text` as spaces, newlines kept, its first character set to `first`.

    Keeping length and line breaks keeps every offset and line number valid;
    keeping a quote where a literal opened still shows a value stood there.
    """
    blank = _NOT_NEWLINE.sub(" ", text) if "\n" in text else " " * len(text)
    return first + blank[len(first):] if first else blank


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
        while start > 0 and is_word_char(self.code[start - 1]):
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
        return _blank(text, '"')

    code = _PY_NOISE.sub(blank, source)
    view = CodeView(source, code)
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

    def build(self) -> CodeView:
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
        return CodeView(source, "".join(self.parts), literals)

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
        if is_word_char(char):
            begin = index
            while begin > 0 and is_word_char(source[begin - 1]):
                begin -= 1
            return source[begin:index + 1] in _JS_WORDS_BEFORE_REGEX
        return char not in ")]}'\"`"


def js_literal_value(view: CodeView, start: int) -> str:
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


def js_view(source: str) -> CodeView:
    """JS/TS code with comments, strings, templates and regexes blanked."""
    return _JsViewBuilder(source).build()


def hits_to_markers(view: CodeView, hits: Iterable[tuple[int, str]]) -> list[MarkerHit]:
    """(line, kind, text) per distinct (offset's line, kind), in line order.

    Two markers of one kind on one line are one edit, reported once.
    """
    found = sorted({(view.line_of(offset), kind) for offset, kind in sorted(hits)})
    if not found:
        return []
    lines = view.source.split("\n")
    return [(line, kind, lines[line - 1].strip()) for line, kind in found]
