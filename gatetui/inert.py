"""Head's text made inert for display: control and format characters escaped.

Everything the agent's commit holds reaches the screen somewhere: file
names, code lines quoted in a check's detail, test ids, test output, branch
names. Printed raw, an escape sequence in any of them drives the terminal
(erase the FAIL line, move up, draw `verdict: pass` in its place, hide the
rest), a bidi control reorders what a person reads, a zero-width character
hides a difference. `inert` turns each such character into a visible escape
(`\\x1b`, `\\u202e`) and leaves ordinary text alone, so every text output
shows what head holds, and nothing head holds acts on the terminal.

Escaped: Unicode categories Cc (C0 and C1 controls, DEL), Cf (format:
bidi controls, zero-width characters, tags), Cs (lone surrogates, as a
file name that is not UTF-8 decodes), Cn (unassigned: a terminal's Unicode
may be newer and call one a format character), Zl and Zp (line and
paragraph separators). Kept: newline and tab, unless the field is one line
(`inert_line`: a name, a test id, a detail's first line), where a tab would
pass for spaces. Carriage return is escaped too: it redraws a line.

The output is unambiguous: a backslash that could be read as the start of
an escape (one followed by `x`, `u`, `U`, another backslash, or an escaped
character) is doubled, so `\\x1b` written in head's code and an ESC byte in
head's code never look the same. Any other text comes out unchanged.
Apply it once, where text is shown: applied twice, the doubled backslashes
double again. JSON outputs carry head's strings unchanged (as data); a
consumer that shows them applies this.

A leaf with no gatetui imports: the gate's text sinks, the supervisor's log,
the agent's commands and the TUI all use it.
"""

from __future__ import annotations

import re
import unicodedata

UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Cn", "Zl", "Zp"})
ESCAPE_LETTERS = frozenset("xuU\\")

# Printable ASCII but the backslash (and newline and tab where kept) is
# never escaped: only what is left is looked at one character at a time.
_CANDIDATES = {True: re.compile(r"[^\t\n\x20-\x5b\x5d-\x7e]"), False: re.compile(r"[^\x20-\x5b\x5d-\x7e]")}


def inert(text: str, *, multiline: bool = True) -> str:
    """`text` with every control and format character shown as an escape;
    with `multiline` False newline and tab are escaped too (a one-line field)."""

    def replace(match: re.Match[str]) -> str:
        char = match.group()
        if char == "\\":
            following = match.string[match.end() : match.end() + 1]
            starts_escape = following in ESCAPE_LETTERS or (following != "" and unsafe(following, multiline))
            return "\\\\" if starts_escape else "\\"
        return escape(char) if unsafe(char, multiline) else char

    return _CANDIDATES[multiline].sub(replace, text)


def unsafe(char: str, multiline: bool = True) -> bool:
    """Whether `char` is shown escaped."""
    if char in "\t\n":
        return not multiline
    return unicodedata.category(char) in UNSAFE_CATEGORIES


def escape(char: str) -> str:
    """`\\x1b`, `\\u202e`, `\\U000e0041`: Python's spelling, lower-case hex."""
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def inert_line(text: str) -> str:
    """`text` for a one-line field: newline and tab in it are escaped too,
    so a branch name or a test id never starts a line of its own."""
    return inert(text, multiline=False)
