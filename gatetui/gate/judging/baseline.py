"""Known failures at base: judging `runs` by what base's own suite did.

Real suites sometimes fail before the agent touches anything (a test that
needs a file nobody committed, one written for another Python). Judging the
agent by those is wrong; hiding them is worse. With `baseline = true` the
gate also runs base's suite on base's code, once per base commit and
profile, and then tolerates exactly the tests that already failed there:
every other test must pass at head (a test that passed at base and fails at
head fails `runs`, and so does a new test that fails). The tolerated ones are
listed in the detail and in the verdict's JSON, never dropped silently.

The cache is the caller's (the state directory's): the gate reads and writes
it through the small `BaselineCache` interface, so it stays store-free.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from gatetui.gate.checks import CheckId, CheckResult
from gatetui.gate.judging import refused_start
from gatetui.gate.judging.results import SuiteRun, judge_runs, listing
from gatetui.gate.reports import junit
from gatetui.policy import Policy
from gatetui.stacks.profile import Profile

FORMAT = 2  # bump when what is cached, or how it is judged, changes


class BaselineCache(Protocol):
    """Records by key; a missing or unreadable record is a miss (None)."""

    def get(self, key: str) -> Mapping[str, Any] | None: ...

    def put(self, key: str, record: Mapping[str, Any]) -> None: ...


def profile_digest(profile: Profile, policy: Policy) -> str:
    """What decides base's outcomes besides its tree: how it installs and
    runs, and whether its runs reach the network."""
    shown = json.dumps(
        {
            "format": FORMAT,
            "stack": profile.stack.name,
            "runner": profile.suite.runner,
            "install": list(profile.install.commands),
            "install_env": profile.install.env,
            "test": profile.suite.command,
            "test_env": profile.suite.env,
            "test_paths": list(profile.suite.paths),
            "network": policy.test_network,
        },
        sort_keys=True,
    )
    return hashlib.sha256(shown.encode()).hexdigest()


def cache_key(base_sha: str, profile: Profile, policy: Policy) -> str:
    return f"{base_sha}-{profile_digest(profile, policy)[:16]}"


@dataclass(frozen=True)
class BaseRun:
    """Base's suite on base's code: each test's outcome, or why there is none."""

    base: str
    outcomes: Mapping[str, str]  # test id -> junit outcome value
    problem: str = ""  # base's install failed, or its run wrote no report
    cached: bool = False
    refused: str = ""  # the runner's own words when it would not start at base (see gate/judging/refused_start.py)

    @property
    def usable(self) -> bool:
        return not self.problem

    @property
    def failing(self) -> frozenset[str]:
        bad = {junit.Outcome.FAILED.value, junit.Outcome.ERROR.value}
        return frozenset(i for i, outcome in self.outcomes.items() if outcome in bad)

    @classmethod
    def of(cls, base: str, run: SuiteRun, cannot_start: tuple[int, ...] = ()) -> BaseRun:
        if run.report is None or run.result.timed_out:
            words = (
                refused_start.runners_words(run.result.output_tail)
                if refused_start.refused([run], cannot_start)
                else ""
            )
            return cls(base, {}, f"base's suite {run.failure()}", refused=words)
        return cls(base, {i: t.outcome.value for i, t in run.report.tests.items()})

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "base": self.base, "outcomes": dict(sorted(self.outcomes.items()))}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None, base: str) -> BaseRun | None:
        """A cached record, or None when it is missing, stale or malformed."""
        if not isinstance(data, Mapping) or data.get("format") != FORMAT or data.get("base") != base:
            return None
        outcomes = data.get("outcomes")
        known = {o.value for o in junit.Outcome}
        if not isinstance(outcomes, Mapping) or not all(isinstance(k, str) and v in known for k, v in outcomes.items()):
            return None
        return cls(base, dict(outcomes), cached=True)


def tolerate(runs: Sequence[SuiteRun], base_run: BaseRun) -> list[SuiteRun]:
    """The runs, each told which failures base already had."""
    return [replace(run, tolerated=base_run.failing) for run in runs]


def judge_runs_against(runs: Sequence[SuiteRun], base_run: BaseRun) -> CheckResult:
    """`runs` under the baseline rule, naming the failures that were already there."""
    result = judge_runs(tolerate(runs, base_run))
    known = sorted(base_run.failing & _failed_in(runs))
    if not known:
        return result
    return CheckResult(CheckId.RUNS, result.status, f"{result.detail}; already failing at base: {listing(known)}")


def _failed_in(runs: Sequence[SuiteRun]) -> set[str]:
    return {t.id for run in runs if run.report is not None for t in run.report.failed()}
