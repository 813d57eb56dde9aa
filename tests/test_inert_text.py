"""`inert`: head's text shown with every control and format character
escaped, ordinary text unchanged, and no two texts shown alike."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatetui.inert import UNSAFE_CATEGORIES, inert, inert_line
from tests.support.hostile_text import unsafe_in

# Every character: surrogates and unassigned code points included (a file
# name that is not UTF-8 decodes to lone surrogates).
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()))
# Text a person would type: what must come out unchanged.
ORDINARY = st.text(
    st.characters(exclude_categories=tuple(UNSAFE_CATEGORIES), exclude_characters="\\") | st.sampled_from("\t\n")
)

# What head's text carries to fool a reader, each with how it must be shown.
HOSTILE = {
    "\x1b[2K\x1b[1A": "\\x1b[2K\\x1b[1A",  # CSI: erase the line, move up
    "\x1b]8;;https://x\x07link\x1b]8;;\x07": "\\x1b]8;;https://x\\x07link\\x1b]8;;\\x07",  # OSC 8 hyperlink
    "\x1b]52;c;cGFzcw==\x07": "\\x1b]52;c;cGFzcw==\\x07",  # OSC 52: write the clipboard
    "\x9b2K": "\\x9b2K",  # C1 CSI, one character
    "\x85": "\\x85",  # C1 next line
    "pass\rFAIL": "pass\\x0dFAIL",  # carriage return: redraw the line
    "FAIL\b\b\b\bpass": "FAIL\\x08\\x08\\x08\\x08pass",  # backspace
    "\x00\x07\x7f": "\\x00\\x07\\x7f",  # NUL, bell, DEL
    "\u202eliaf\u202c": "\\u202eliaf\\u202c",  # right-to-left override, pop
    "\u2066x\u2069": "\\u2066x\\u2069",  # isolates
    "\u202a\u202b\u202d": "\\u202a\\u202b\\u202d",  # embeddings, left-to-right override
    "a\u200bb\u200d\ufeff": "a\\u200bb\\u200d\\ufeff",  # zero-width space, joiner, BOM
    "\U000e0041": "\\U000e0041",  # a tag character (Cf, beyond the BMP)
    "a\u2028b\u2029": "a\\u2028b\\u2029",  # line and paragraph separators
    "\udcff": "\\udcff",  # a lone surrogate
}


def restore(shown: str) -> str:
    """What `inert` was given, read back from what it showed: the round
    trip that proves no two texts are shown alike."""
    out, i = [], 0
    while i < len(shown):
        if shown[i] == "\\" and i + 1 < len(shown):
            follows = shown[i + 1]
            if follows == "\\":
                out.append("\\")
                i += 2
                continue
            width = {"x": 2, "u": 4, "U": 8}.get(follows)
            if width:
                out.append(chr(int(shown[i + 2 : i + 2 + width], 16)))
                i += 2 + width
                continue
        out.append(shown[i])
        i += 1
    return "".join(out)


@pytest.mark.parametrize(("raw", "shown"), HOSTILE.items(), ids=[repr(k)[:20] for k in HOSTILE])
def test_each_hostile_character_is_shown_as_its_escape(raw: str, shown: str) -> None:
    assert inert(raw) == shown
    assert inert_line(raw) == shown


def test_markup_is_ordinary_text_and_stays_as_written() -> None:
    """Markup is the TUI's concern (never parsed there): as text it is unchanged."""
    for text in ("[@click=app.quit]x[/]", "[bold]pass[/bold]", "[link=https://x]y[/link]"):
        assert inert(text) == text


def test_newlines_and_tabs_stay_unless_the_field_is_one_line() -> None:
    """A tab in a name would pass for spaces."""
    assert inert("a\n\tb") == "a\n\tb"
    assert inert_line("a\n\tb") == "a\\x0a\\x09b"


def test_a_backslash_that_could_read_as_an_escape_is_doubled() -> None:
    """Head's code holding the four characters `\\x1b` is not shown as an ESC is."""
    assert inert("\\x1b") == "\\\\x1b"
    assert inert("\x1b") == "\\x1b"
    assert inert("\\\x1b") == "\\\\\\x1b"  # a backslash, then an ESC
    assert inert("\\\\") == "\\\\\\"  # the first is doubled (a backslash follows), the last is not
    assert inert(r"C:\path\n") == r"C:\path\n"  # no escape starts there: left as written
    assert inert("end\\") == "end\\"


@given(ANY_TEXT)
def test_the_output_holds_no_control_or_format_character(text: str) -> None:
    assert unsafe_in(inert(text)) == []
    assert unsafe_in(inert_line(text), multiline=False) == []


@given(ORDINARY)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert inert(text) == text


@given(ANY_TEXT)
def test_what_was_shown_reads_back_to_what_head_holds(text: str) -> None:
    assert restore(inert(text)) == text
    assert restore(inert_line(text)) == text


@given(ANY_TEXT, ANY_TEXT)
def test_two_texts_are_never_shown_alike(a: str, b: str) -> None:
    if a != b:
        assert inert(a) != inert(b)
