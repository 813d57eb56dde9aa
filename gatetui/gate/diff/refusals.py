"""What head adds that the gate refuses to judge, before anything runs.

Two kinds, each the agent's doing and each a way past the rules that read
the tree: code that would run with no source to read (a sourceless .pyc),
and a file name that reads one way to a person and another to a glob, a
shell or a report (bytes that are not UTF-8, a newline, a control or
bidirectional-format character). Names already in base are base's business.
The detail names them as they are, but for a newline, written `\\n` so the
detail stays one line (its first line is what the one-line views show):
every place that shows it makes the rest inert (gatetui/inert.py), escaped
once, where the gate's own escaping would have been escaped again.
"""

from __future__ import annotations

import re
import unicodedata

from gatetui.git.snapshot import Snapshot

# Control, format (bidi overrides, zero-width), undecodable bytes (fsdecode's
# surrogates), line and paragraph separators.
ODD = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
SHOWN = 8


def refusal(base: Snapshot, head: Snapshot, unreadable_code: str) -> str:
    """Why the change cannot be judged, in one line; "" when it can."""
    added = [p for p in head.paths if p not in base or base.ident(p) != head.ident(p)]
    odd = sorted(p for p in added if odd_name(p))
    if odd:
        names = ", ".join(p.replace("\n", "\\n") for p in odd[:SHOWN])
        return (
            "head adds a file whose name the gate cannot judge (not UTF-8, or a control or format "
            f"character in it): {names}; rename it"
        )
    unreadable = sorted(p for p in added if unreadable_code and re.search(unreadable_code, p))
    if unreadable:
        return (
            "head adds code with no source to read (the gate judges only what it can read): "
            f"{', '.join(unreadable[:SHOWN])}"
        )
    return ""


def odd_name(path: str) -> bool:
    return any(unicodedata.category(ch) in ODD for ch in path)
