"""The stacks gatetui knows, in the order detection tries them, and the one
way a profile and its policy are read from base.

Adding a stack is a package under `stacks/` and one line in `STACKS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from gatetui.config import ConfigError, SealSettings, Settings, load_settings
from gatetui.errors import BadInput
from gatetui.git.snapshot import Snapshot
from gatetui.policy import Policy, read_policy
from gatetui.stacks import go, node, python
from gatetui.stacks.base import Stack
from gatetui.stacks.profile import Profile
from gatetui.stacks.testdefs import TestLanguage

# First match wins: a python project with a package.json for its docs is python.
STACKS: Mapping[str, Stack] = MappingProxyType({s.name: s for s in (python.STACK, go.STACK, node.STACK)})
LANGUAGES: tuple[TestLanguage, ...] = tuple(dict.fromkeys(lang for s in STACKS.values() for lang in s.languages))


def names() -> tuple[str, ...]:
    return tuple(STACKS)


def language_of(path: str) -> TestLanguage | None:
    """The language the diff scan reads a file as, by its extension."""
    return next((lang for lang in LANGUAGES if lang.reads(path)), None)


def looks_like_test_file(path: str) -> bool:
    """The guess at whether a path holds tests, when no profile says."""
    language = language_of(path)
    return language is not None and language.looks_like_test_file(path)


def detect(base: Snapshot, settings: Settings) -> Stack:
    """The stack base's settings name, else the first whose marker files
    sit at base's top."""
    if settings.stack:
        if settings.stack not in STACKS:
            wanted = " or ".join(repr(n) for n in STACKS)
            raise ConfigError(
                f"{settings.source} at base {base.sha[:7]}: stack must be {wanted}, not {settings.stack!r}"
            )
        return STACKS[settings.stack]
    for stack in STACKS.values():
        if any(marker in base for marker in stack.markers):
            return stack
    markers = ", ".join(m for s in STACKS.values() for m in s.markers)
    raise BadInput(f"no stack detected at base {base.sha[:7]}: none of {markers} at the top; set stack in gatetui.toml")


@dataclass(frozen=True)
class Judge:
    """How a change is judged, read from base alone: what the stack can do
    (the profile) and what base's settings decide (the policy)."""

    profile: Profile
    policy: Policy


def load_judge(base: Snapshot, seal: SealSettings | None = None) -> Judge:
    """The profile and policy that judge a change, from the base commit alone.

    `seal` replaces base's own sealing (its seal table and `sealed`): the
    lab tries rules on a scenario without editing it."""
    settings = load_settings(base)
    if seal is not None:
        settings = replace(
            settings,
            seal=seal,
            sealed=(),
            hidden=seal.hidden if seal.hidden is not None else settings.hidden,
            random_order=settings.random_order if seal.random_order is None else seal.random_order,
            baseline=settings.baseline if seal.baseline is None else seal.baseline,
        )
    stack = detect(base, settings)
    profile = stack.load(base, settings)
    if not any(profile.is_test_file(p) for p in base.paths):
        where = ", ".join(profile.suite.paths) or "the repository"
        raise BadInput(
            f"no tests found at base {base.sha[:7]} under {where}: nothing to judge a change by; "
            "set test_paths in [tool.gatetui]"
        )
    return Judge(profile, read_policy(settings, (*profile.suite.sealed_by_default, *stack.default_sections)))


def load_profile(base: Snapshot, seal: SealSettings | None = None) -> Profile:
    """What the stack can do for base (`load_judge` without the policy)."""
    return load_judge(base, seal).profile
