"""The gate's checks, declared once, in the order every consumer lists them
(install first, then the runs, the diff's checks, old and hidden tests, and
what the changed code's tests catch): adding a check is one declaration
here, one CheckId and its title, and the code that judges it.
"""

from __future__ import annotations

from types import MappingProxyType

from gatetui.gate.checks.spec import CheckSpec, Counts, Need, Phase
from gatetui.gate.checks.vocabulary import CheckId

SPECS: tuple[CheckSpec, ...] = (
    CheckSpec(CheckId.INSTALL, frozenset(), Phase.INSTALL),
    CheckSpec(CheckId.RUNS, frozenset({Need.INSTALL, Need.HEAD_RUNS, Need.BASE_OWN}), Phase.SUITE),
    CheckSpec(CheckId.TESTS_KEPT, frozenset({Need.DIFF, Need.INSTALL, Need.HEAD_RUNS, Need.OLD_TESTS_RUN}), Phase.PLAN),
    CheckSpec(
        CheckId.NO_NEW_SKIPS,
        frozenset({Need.DIFF, Need.INSTALL, Need.HEAD_RUNS, Need.OLD_TESTS_RUN, Need.BASE_OWN}),
        Phase.PLAN,
    ),
    # a failure asks a person (both versions of the changed test side by side), unless policy says fail
    CheckSpec(
        CheckId.OLD_TESTS, frozenset({Need.INSTALL, Need.HEAD_RUNS, Need.OLD_TESTS_RUN}), Phase.SUITE, Counts.REVIEW
    ),
    # announced with the plan: not configured, or configured with nothing to run, is known there
    CheckSpec(CheckId.HIDDEN, frozenset({Need.INSTALL, Need.HIDDEN_TESTS}), Phase.PLAN),
    # announced with the plan (a stack without coverage, or no changed code, is known there); what they
    # find asks a person: a line no test runs, a mutant no test kills
    CheckSpec(CheckId.COVERED, frozenset({Need.INSTALL, Need.HEAD_RUNS}), Phase.PLAN, Counts.REVIEW),
    CheckSpec(CheckId.BITES, frozenset({Need.INSTALL, Need.HEAD_RUNS, Need.MUTANT_RUNS}), Phase.PLAN, Counts.REVIEW),
)

BY_ID: MappingProxyType[CheckId, CheckSpec] = MappingProxyType({spec.id: spec for spec in SPECS})

# The order checks are listed in everywhere.
CHECK_ORDER: tuple[CheckId, ...] = tuple(spec.id for spec in SPECS)

TITLES: MappingProxyType[CheckId, str] = MappingProxyType({spec.id: spec.id.title for spec in SPECS})


def spec_of(check: CheckId) -> CheckSpec:
    return BY_ID[check]


def announced_at(phase: Phase) -> tuple[CheckSpec, ...]:
    """The checks the runner announces at `phase`, in the gate's order."""
    return tuple(spec for spec in SPECS if spec.announced is phase)
