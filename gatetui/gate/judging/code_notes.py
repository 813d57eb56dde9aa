"""What `covered` and `bites` found, line by line, read back from their
details: the review screen shows each note beside head's line.

The details are the gate's own words (phases/coverage.py and
mutant_trials.py write them, one finding a line after the first), kept in
the run's sealed record; this reads them back for a person, never to judge.
"""

from __future__ import annotations

import re

from gatetui.gate.checks import CheckId

# "path:12: text" after an optional "survived: " / "not judged: " / "timed out: " / "told apart: " ...
_LINE = re.compile(
    r"^(?P<kind>survived: |not judged: |timed out: |told apart: |likely equivalent: )?(?P<path>[^\s:][^:]*):(?P<line>\d+): (?P<rest>.*)$"
)
ARROW = "  ->  "

Notes = dict[str, dict[int, list[str]]]


def code_notes(details: dict[CheckId, str]) -> Notes:
    """path -> head's line -> what a person should know about it."""
    notes: Notes = {}
    for check in (CheckId.COVERED, CheckId.BITES):
        for text in details.get(check, "").splitlines()[1:]:
            found = _LINE.match(text)
            if found is None:
                continue
            note = _note(check, found.group("kind") or "", found.group("rest"))
            notes.setdefault(found.group("path"), {}).setdefault(int(found.group("line")), []).append(note)
    return notes


def _note(check: CheckId, kind: str, rest: str) -> str:
    if check is CheckId.COVERED:
        return "runs under no test"
    before, _, after = rest.partition(ARROW)
    return f"mutant {kind.strip(': ')}: {compact(before, after) if after else rest}"


def compact(before: str, after: str, context: int = 1) -> str:
    """Only the words a mutant changed, with `context` words around them:
    "year % 400 == 0" and "year % 401 == 0" -> "% 400 ==  ->  % 401 =="."""
    if after == "(removed)":
        return f"{before}  ->  (removed)"
    a, b = before.split(" "), after.split(" ")
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    start = max(0, head - context)

    def middle(words: list[str]) -> str:
        end = len(words) - max(0, tail - context)
        return " ".join(words[start:end]) or "(nothing)"

    return f"{middle(a)}{ARROW}{middle(b)}"
