"""Mutants of changed code, as every stack hands them to the `bites` check.

A mutant is one small bug put into one changed line (a comparison flipped, a
return value dropped); the check runs the tests that reach that line over it
and asks whether any fails. This module holds what is the same for every
stack: the record, the shape of a stack's mutate function, and how a bounded
set is chosen so that a cap spreads over the whole change instead of
spending itself on the first busy line.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

# The kinds of mutant, in the order a line's mutants are tried: the ones a
# reviewer reads fastest and that most often find a missing assertion first.
OPERATORS = ("compare", "boolean", "negate", "return-none", "arith", "constant", "remove")


@dataclass(frozen=True)
class Mutant:
    path: str  # repo-relative file, as in head's tree
    line: int  # 1-based line the mutant changes
    operator: str  # one of OPERATORS
    before: str  # the original line, stripped
    after: str  # the mutated line, stripped ("" when a statement is removed)
    source: bytes  # the whole mutated file, utf-8

    def diff_line(self) -> str:
        """One line a reviewer reads: where, what it was, what it became."""
        return f"{self.path}:{self.line}: {self.before}  ->  {self.after or '(removed)'}"


# (path, text, changed line numbers) -> every mutant of those lines, in a
# deterministic order; lines where no mutant can change behaviour (logging
# calls, docstrings, type hints / annotations, pass, imports) give none.
Mutate = Callable[[str, str, frozenset[int]], list[Mutant]]

# (text, lines) -> a file that runs as head's text does but differs from it
# on those lines, as a mutant differs (bites' control runs it in a mutant's
# place: a test that fails there tells code apart by reading it); None when
# the stack cannot make one for that text.
Twin = Callable[[str, frozenset[int]], bytes | None]


def pick(
    per_line: Mapping[tuple[str, int], Sequence[Mutant]],
    cap: int,
    costly: Container[tuple[str, int]] = (),
    costly_cap: int = 0,
) -> tuple[list[Mutant], int]:
    """At most `cap` mutants, round-robin over the lines in (path, line)
    order: the first mutant of every line, then the second of every line,
    and so on; of the `costly` lines' mutants (whose runs cost most), at
    most `costly_cap`. Returns the chosen ones and how many were left
    untried, so a report can say the cap was reached. Deterministic: the
    same change gives the same mutants, and a rerun judges what the first
    run judged."""
    total = sum(len(queue) for queue in per_line.values())
    chosen: list[Mutant] = []
    dear = 0
    for mutant in round_robin(per_line):
        if len(chosen) >= cap:
            break
        if (mutant.path, mutant.line) in costly:
            if dear >= costly_cap:
                continue
            dear += 1
        chosen.append(mutant)
    return chosen, total - len(chosen)


def round_robin(per_key: Mapping[tuple[str, int], Sequence[T]]) -> Iterator[T]:
    """Every item, the first of each key (in key order) first, then the second of each, ..."""
    queues = [per_key[key] for key in sorted(per_key)]
    for depth in range(max((len(queue) for queue in queues), default=0)):
        yield from (queue[depth] for queue in queues if depth < len(queue))
