"""What a stack says about a static check its install runs (go vet).

A real project's base can already have findings (one of six Debian-packaged
Go libraries has an `Example` named after an identifier that is not there):
an install that failed on any finding made every change to such a project
an error, honest or not. So a stack declares its checker as a `Lint`, and
the gate judges its findings as it judges the runs: against base's
(gate/phases/lint.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Lint:
    """Run last in every install of the profile's: `command` writes its
    findings to {report} (named `report`) and exits 0 with findings,
    non-zero only when it could not check (the install then fails, as on
    any step); `read` turns that hostile report, given the tree's path as
    the commands saw it, into one key per finding, the same at base and
    head for the same finding wherever lines moved it (raises
    stacks.base.ReportProblem). A finding head adds fails the install,
    named; those base has too are told in the detail."""

    command: str
    report: str
    read: Callable[[bytes | None, str], list[str]]
    label: str  # how a detail names it: "go vet"
