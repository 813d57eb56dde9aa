"""Which lines of a file head added: the one answer every diff rule reads
(the diff scan's markers, each stack's hook scan, the changed lines
`covered` and `bites` judge), so they all agree on what changed."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from difflib import SequenceMatcher

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
    middle_a, middle_b = a[head : len(a) - tail], b[head : len(b) - tail]
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


def added(old: str, new: str) -> list[tuple[int, str]]:
    """Head's added lines, in order: (1-based number in `new`, the line)."""
    text = new.split("\n")
    return [(n, text[n - 1]) for n in sorted(added_lines(old, new))]


def without_comment(line: str, marker: str) -> str:
    """`line` up to a comment that starts with `marker` outside a string
    literal on the line. Cutting at the first marker anywhere would let a
    string such as "http://" hide the rest of the line from the diff rules;
    a string begun on an earlier line is not seen, so the cut errs only
    toward keeping text."""
    quote = ""
    i = 0
    while i < len(line):
        char = line[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "'\"`":
            quote = char
        elif line.startswith(marker, i):
            return line[:i]
        i += 1
    return line


def first_match(code: str, rules: Sequence[tuple[re.Pattern[str], str]]) -> str | None:
    """What the first rule that matches `code` says of it (the stacks' hook
    scans weigh an added line against their rules in order)."""
    return next((said for pattern, said in rules if pattern.search(code)), None)
