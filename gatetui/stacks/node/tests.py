"""JS/TS test definitions, and the markers that skip or focus them.

`tests_kept` counts test definitions and `no_new_skips` looks for skip,
xfail and focus markers; this module answers both for JS and TS files. A
definition is an `it`/`test` call (through `.only`, `.each(...)` and kin)
whose title is a literal, named with its enclosing describe blocks; markers
are `.skip`/`.only`/`.todo`..., `xit`/`fdescribe`..., node:test options and
runtime `t.skip()`. Both are patterns in the code view (see `codeview`),
examined only where a candidate word occurs, so text in strings, templates
and comments never counts.

Pure: stdlib only, no I/O. Any input, however broken, yields an answer and
never an exception, because the code being judged is often mid-edit.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from gatetui.stacks.codeview import CodeView, hits_to_markers, is_word_char, normalize
from gatetui.stacks.node.jsview import js_literal_value, js_view
from gatetui.stacks.testdefs import MarkerHit, TestDef

__all__ = ["js_markers", "js_test_defs", "js_text_markers", "js_view_defs"]


# --------------------------------------------------------------------------
# JS/TS: test definitions
# --------------------------------------------------------------------------

_JS_TEST_FUNCS = frozenset({"it", "test", "specify", "xit", "xtest", "xspecify", "fit"})
_JS_SUITE_FUNCS = frozenset({"describe", "suite", "context", "xdescribe", "xcontext", "fdescribe"})
_JS_CALLEES = re.compile(
    r"(?:" + "|".join(sorted(_JS_TEST_FUNCS | _JS_SUITE_FUNCS, key=len, reverse=True)) + r")(?![\w$])"
)
# Modifiers that leave a call a definition (`it.skip("t", fn)` is still a
# test, one the marker check reports); `it.todo("t")` is only a placeholder.
_JS_DEF_MODIFIERS = frozenset(
    {"only", "skip", "concurrent", "sequential", "each", "skipIf", "runIf", "fixme", "fails", "failing"}
)
# Modifiers taking arguments of their own before the test's own call:
# `it.each(table)("title", fn)`, `test.skipIf(cond)("title", fn)`.
_JS_ARG_MODIFIERS = frozenset({"each", "skipIf", "runIf"})
_JS_MODIFIER = re.compile(r"\s*\.\s*([A-Za-z_$][\w$]*)")


class _JsCall(NamedTuple):
    """`name.mod1.mod2(...)`: the callee's modifiers and the title's "("."""

    mods: tuple[str, ...]
    open: int


def _js_call(view: CodeView, name_end: int) -> _JsCall | None:
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


def _js_title(view: CodeView, call: _JsCall) -> str | None:
    """The call's first argument when it is a string or template literal."""
    first = view.after(call.open + 1)
    return js_literal_value(view, first) if first in view.literals else None


def _js_is_bare(view: CodeView, start: int) -> bool:
    """Whether the name at `start` is no property: `regex.test(` is no test."""
    return view.char(view.before(start)) != "."


def js_test_defs(path: str, source: str) -> list[TestDef]:
    """Test definitions in a JS/TS file, in source order.

    A definition is a call of `it`/`test` (or `specify`, `xit`, `fit`...),
    bare or through `.only`/`.skip`/`.concurrent`/`.each(...)`, whose first
    argument is a string or template literal. `foo.test(` is a method call,
    not a test. Names carry their describe blocks: "math > adds".
    """
    return js_view_defs(path, js_view(normalize(source)))


def js_view_defs(path: str, view: CodeView) -> list[TestDef]:
    """Test definitions from a view, tracking the describe blocks open."""
    out: list[TestDef] = []
    suites: list[tuple[int, str]] = []  # (offset of the closing ")", title)
    for match in _JS_CALLEES.finditer(view.code):
        start = match.start()
        if is_word_char(view.char(start - 1)):
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
    "only": "focus",
    "skip": "skip",
    "todo": "skip",
    "skipIf": "skip",
    "runIf": "skip",
    "fixme": "skip",  # Playwright's skip
    "fails": "xfail",
    "failing": "xfail",
    "fail": "xfail",  # vitest, jest, Playwright
}
_JS_PREFIXED: dict[str, str] = {
    "xit": "skip",
    "xtest": "skip",
    "xspecify": "skip",
    "xdescribe": "skip",
    "xcontext": "skip",
    "fit": "focus",
    "fdescribe": "focus",
}
_JS_OPTION_KEYS: dict[str, str] = {"skip": "skip", "todo": "skip", "only": "focus"}
_JS_OPTION_CALLEES = frozenset({"it", "test", "describe", "suite"})
# Receivers of a runtime skip: node:test's `t`, vitest's `ctx`/`context`,
# mocha's `this`. `stream.skip(3)` has none of them, so it is no marker.
_JS_SKIP_RECEIVERS = frozenset({"t", "ctx", "context", "this"})
_JS_MARK_WORD = re.compile(
    r"(?:" + "|".join(sorted({*_JS_MODIFIER_KINDS, *_JS_PREFIXED}, key=len, reverse=True)) + r")(?![\w$])"
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
    return js_text_markers(normalize(source), None)


def js_text_markers(text: str, view: CodeView | None) -> list[MarkerHit]:
    """Markers of normalized text, reusing its view when there is one."""
    if not _JS_MARKER_HINT.search(text):
        return []
    view = view or js_view(text)
    return hits_to_markers(view, _js_marker_hits(view))


def _js_marker_hits(view: CodeView) -> list[tuple[int, str]]:
    """(offset, kind) for each marker word that is a marker where it stands."""
    hits: list[tuple[int, str]] = []
    for match in _JS_MARK_WORD.finditer(view.code):
        word, start, end = match.group(), match.start(), match.end()
        if is_word_char(view.char(start - 1)):
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


def _js_modifier_kind(view: CodeView, word: str, dot: int, end: int) -> str | None:
    """The kind of `.only`/`.skip`/... given what it is a member of.

    `it.only(`, `describe.skip.each(...)(`, `test.skipIf(c)(`: a chain on a
    bare test function, ending in a call. `t.skip()`, `this.skip()`: a
    runtime skip on a test context.
    """
    chain, _, bare = view.chain_before(dot)
    if not bare or not chain:
        return None
    if (
        len(chain) == 1
        and chain[0] in _JS_SKIP_RECEIVERS
        and word in ("skip", "todo")
        and view.char(view.after(end)) == "("
    ):
        return "skip"
    if chain[0] in _JS_MARK_BASES and _JS_CALL_FOLLOWS.match(view.code, end):
        return _JS_MODIFIER_KINDS[word]
    return None


def _js_option_set(view: CodeView, start: int, end: int) -> bool:
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


def js_scan(path: str, text: str, markers: bool) -> tuple[list[TestDef], list[MarkerHit]]:
    """Definitions and (when asked) markers of one normalized version, lexing it once."""
    view = js_view(text)
    return js_view_defs(path, view), js_text_markers(text, view) if markers else []


_TEST_DIRS = frozenset({"test", "tests", "__tests__"})


def looks_like_js_test(path: str) -> bool:
    """`*.test.*`, `*.spec.*`, or under a `test`/`tests`/`__tests__` directory."""
    parts = path.replace("\\", "/").split("/")
    name, dirs = parts[-1], {p.lower() for p in parts[:-1]}
    inner = {p.lower() for p in name.split(".")[1:-1]}
    return bool(inner & {"test", "spec"}) or not dirs.isdisjoint(_TEST_DIRS)
