"""A search for an input that tells a surviving mutant apart, as a stack
offers it to `bites` (`ChangedLines.mutant_search` of the profile).

A mutant no test killed is one of two things: a test the change lacks, or
a mutant that behaves as the original on every input (`x > hi` and
`x >= hi` where both branches give `hi` at `x == hi`). Mutation testing
cannot tell these apart by running the tests; a search can, for a plain
function: record the arguments the tests pass it (in a run of those tests
over head), then try inputs around them on head's function and on the
mutant's, each in a fresh copy of the install. An input that gives two
results is the missing test, shown as one; none within the budget makes
the mutant likely equivalent.

What the runs write back is hostile (head's code ran there): the readers
here take only a bounded JSON shape, and anything else is "no answer",
which leaves the survivor as it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gatetui.stacks.base import RunPlugin
from gatetui.stacks.mutation import Mutant

MAX_CALLS = 64
MAX_TEXT = 240
MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass(frozen=True)
class Call:
    """One call the tests made: each argument as a literal's text."""

    args: tuple[str, ...]
    kwargs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class SearchJob:
    module: str  # the name the tests imported the function's module as
    function: str
    calls: tuple[Call, ...]
    mutants: Mapping[str, Mutant]  # key -> a surviving mutant of the function


@dataclass(frozen=True)
class Found:
    """What the search said of one mutant."""

    call: str = ""  # the input that tells it apart, as a call ("" when none was found)
    here: str = ""  # head's result on it
    there: str = ""  # the mutant's
    returned: int = 0  # when none was found: distinct inputs on which head's function returned
    every: bool = False  # and whether those were every input the search could make


@dataclass(frozen=True)
class MutantSearch:
    # (path, head's text, line) -> the plain function the line is in, or None
    target: Callable[[str, str, int], str | None]
    # (path, function, out) -> the plugin that records its calls into the file `out`
    recorder: Callable[[str, str, str], RunPlugin]
    # job -> the files of the search and its command ({folder}: where they are; {out}: where it writes)
    searcher: Callable[[SearchJob], tuple[RunPlugin, str]]


def read_calls(raw: bytes | None) -> tuple[str, tuple[Call, ...]] | None:
    """The module's name and the recorded calls; None for anything else."""
    data = _json(raw)
    if not isinstance(data, dict) or not _text(data.get("module")) or not MODULE.fullmatch(data["module"]):
        return None
    calls = data.get("calls")
    if not isinstance(calls, list):
        return None
    out: list[Call] = []
    for call in calls[:MAX_CALLS]:
        args, kwargs = (call.get("args"), call.get("kwargs")) if isinstance(call, dict) else (None, None)
        if (
            not isinstance(args, list)
            or not isinstance(kwargs, dict)
            or not all(map(_text, args))
            or not all(_text(k) and _text(v) for k, v in kwargs.items())
        ):
            return None
        out.append(Call(tuple(args), tuple(sorted(kwargs.items()))))
    return data["module"], tuple(out)


def read_found(raw: bytes | None, keys: frozenset[str]) -> dict[str, Found]:
    """Each mutant's answer, for the keys asked; a key missing or malformed has none."""
    data = _json(raw)
    answers = data.get("mutants") if isinstance(data, dict) else None
    if not isinstance(answers, dict):
        return {}
    out: dict[str, Found] = {}
    for key in keys & set(answers):
        answer = answers[key]
        if not isinstance(answer, dict):
            continue
        found, none, every = answer.get("found"), answer.get("none"), answer.get("every", False)
        if isinstance(found, list) and len(found) == 3 and all(map(_text, found)):
            out[key] = Found(*found)
        elif type(none) is int and none >= 0 and type(every) is bool:
            out[key] = Found(returned=none, every=every)
    return out


def _json(raw: bytes | None) -> Any:
    if raw is None or len(raw) > MAX_CALLS * MAX_TEXT * 8:
        return None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def _text(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_TEXT
