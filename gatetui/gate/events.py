"""The typed events the gate runner yields.

The TUI, `gatetui check` and the submit server consume this one stream; none
of them talks to a backend. Events are frozen records so a consumer can keep
them (history, replay) without copying.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gatetui.gate.checks import CheckId, CheckResult, Verdict
from gatetui.gate.cost import Cost
from gatetui.gate.sealing.digests import Digests


@dataclass(frozen=True)
class RunStarted:
    run_id: str
    repo: str
    base_ref: str
    head_ref: str
    base: str  # the merge base's sha: what head is judged against
    head: str
    backend: str
    stack: str
    checks: tuple[CheckId, ...]
    notes: tuple[str, ...] = ()  # what isolation is not enforced, said plainly
    isolation: dict[str, object] = field(default_factory=dict)  # what is, for the JSON


@dataclass(frozen=True)
class CheckStarted:
    check: CheckId


@dataclass(frozen=True)
class CheckProgress:
    """A check's interim answer: the diff half is in, the run half is pending."""

    check: CheckId
    detail: str


@dataclass(frozen=True)
class OutputChunk:
    """Lines of a command's output, as they arrive.

    `stream` names which command ("install", "run 1", "old tests",
    "baseline install", "baseline") since a check may run several side by
    side. The "hidden" stream carries the hidden tests' output: it may name
    them, so a consumer the agent reads (the submit server) must drop it.
    """

    check: CheckId
    stream: str
    text: str


@dataclass(frozen=True)
class CheckFinished:
    result: CheckResult


@dataclass(frozen=True)
class DigestsComputed:
    digests: Digests


@dataclass(frozen=True)
class CostUpdated:
    cost: Cost


@dataclass(frozen=True)
class BaselineInfo:
    """Which rule judged `runs`: strict (every test passes), or the baseline
    (failures base already had are tolerated, and listed here)."""

    requested: bool = False  # baseline = true in base's config
    used: bool = False  # false when strict, or when base's own run was unusable
    base: str = ""
    cached: bool = False  # base's outcomes came from the cache
    known_failures: tuple[str, ...] = ()  # failing at base (all of them, not only those seen at head)
    problem: str = ""  # why the baseline could not be used

    @property
    def rule(self) -> str:
        return "baseline" if self.used else "strict"

    def to_json(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "used": self.used,
            "requested": self.requested,
            "base": self.base,
            "cached": self.cached,
            "known_failures": list(self.known_failures),
            "problem": self.problem,
        }


@dataclass(frozen=True)
class RunFinished:
    verdict: Verdict
    results: tuple[CheckResult, ...]
    digests: Digests
    cost: Cost
    seconds: float
    notes: tuple[str, ...] = field(default=())
    baseline: BaselineInfo = field(default_factory=BaselineInfo)


GateEvent = (
    RunStarted
    | CheckStarted
    | CheckProgress
    | OutputChunk
    | CheckFinished
    | DigestsComputed
    | CostUpdated
    | RunFinished
)
