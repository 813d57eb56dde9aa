"""The JS/TS view: a `CodeView` of JavaScript or TypeScript source with
comments, strings, template literals and regex literals blanked.

JS is harder to lex than Python: `/` starts a regex or divides depending on
the word before it, and template literals nest code inside text (`${ }`).
A builder walks the source once, in regex-sized steps, keeping that state;
`js_literal_value` reads a blanked string literal's value back (a test's
title). Pure: stdlib only, no I/O, no exception on any input.
"""

from __future__ import annotations

import re

from gatetui.stacks.codeview import CodeView, blanked, is_word_char

__all__ = ["js_literal_value", "js_view"]


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
_JS_WORDS_BEFORE_REGEX = frozenset(
    {
        "return",
        "typeof",
        "instanceof",
        "in",
        "of",
        "new",
        "delete",
        "void",
        "throw",
        "case",
        "do",
        "else",
        "yield",
        "await",
    }
)


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
            pos = self.blanked(0, newline if newline >= 0 else len(source))
        while True:
            match = (_JS_NOISE_IN_HOLE if holes else _JS_NOISE_TOP).search(source, pos)
            if match is None:
                break
            start, pos = match.span()
            char = source[start]
            if char == "'" or char == '"':
                literals[start] = pos
                self.parts.append(source[self.copied : start])
                self.parts.append(
                    '"' + " " * (pos - start - 1)
                    if source.count("\n", start, pos) == 0
                    else blanked(source[start:pos], '"')
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
        self.parts.append(source[self.copied :])
        return CodeView(source, "".join(self.parts), literals)

    def blanked(self, start: int, end: int, first: str = "") -> int:
        """Copy the code up to `start`, then source[start:end] blanked."""
        self.parts.append(self.source[self.copied : start])
        self.parts.append(blanked(self.source[start:end], first))
        self.copied = end
        return end

    def _slash(self, start: int, end: int) -> int:
        """A comment, a regex literal, or a division; where to go on."""
        if end - start > 1:  # the pattern matched a whole comment
            self.comments.append((start, end))
            return self.blanked(start, end)
        regex = _JS_REGEX.match(self.source, start)
        if regex is None or not self._regex_may_start(start):
            return end
        return self.blanked(start, regex.end(), "/")

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
            return self.blanked(start, stop + 2, first)
        end = min(stop + 1, len(source))
        self.literals[opened] = end
        return self.blanked(start, end, first)

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
            return source[begin : index + 1] in _JS_WORDS_BEFORE_REGEX
        return char not in ")]}'\"`"


def js_literal_value(view: CodeView, start: int) -> str:
    """The text of the literal opening at `start`, as a test title needs it.

    Strings are unescaped; templates are kept raw, `${...}` and all.
    """
    end = view.literals[start]
    quote = view.source[start]
    body = view.source[start + 1 : end]
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
