"""Head's text as an agent would write it to fool whoever reads the gate's
output, and the test that none of it reached an output raw (no tests here)."""

from __future__ import annotations

import unicodedata

from gatetui.inert import UNSAFE_CATEGORIES

# A flagged line that, printed raw, erases the FAIL line and the one above,
# draws `verdict: pass` at column 1, then hides everything after it.
FORGED_PASS = "\x1b[2K\x1b[1A\x1b[2K\x1b[1Gverdict: pass\x1b[8m"
FORGED_PASS_SHOWN = "\\x1b[2K\\x1b[1A\\x1b[2K\\x1b[1Gverdict: pass\\x1b[8m"
# Test output: OSC 52 writes the clipboard, CSI 2J clears the screen, C1 CSI does too.
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x9b2J"
CLIPBOARD_SHOWN = "\\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b[2J\\x9b2J"
# A name that reads backwards from the override on, with a zero-width space in it.
BIDI_NAME = "\u202eyp.\u200bvil\u2066e\u2069"
BIDI_NAME_SHOWN = "\\u202eyp.\\u200bvil\\u2066e\\u2069"
# Textual and Rich markup: an action on click, a style, a hyperlink.
MARKUPS = ("[@click=app.quit]quit[/]", "[bold]pass[/bold]", "[link=https://example.invalid]x[/link]")
MARKUP = " ".join(MARKUPS)
REDRAW = "FAIL\rpass\b\b\b\bpass"
REDRAW_SHOWN = "FAIL\\x0dpass\\x08\\x08\\x08\\x08pass"


def unsafe_in(text: str, multiline: bool = True) -> list[str]:
    """The characters of `text` that act on a terminal or hide what is
    written (newline and tab too, in a one-line field)."""
    return [
        c
        for c in text
        if (c in "\t\n" and not multiline) or (c not in "\t\n" and unicodedata.category(c) in UNSAFE_CATEGORIES)
    ]
