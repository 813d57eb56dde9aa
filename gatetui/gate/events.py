"""The typed events the gate runner yields.

The TUI, `gatetui check` and the submit server consume this one stream; none
of them talks to a backend. Events are frozen records so a consumer can keep
them (history, replay) without copying.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gatetui.gate.checks import CheckId, CheckResult, Verdict
from gatetui.gate.cost import Cost
from gatetui.gate.digests import Digests


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

    `stream` names which command ("install", "run 1", "old tests") since a
    check may run several side by side.
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
class RunFinished:
    verdict: Verdict
    results: tuple[CheckResult, ...]
    digests: Digests
    cost: Cost
    seconds: float
    notes: tuple[str, ...] = field(default=())


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
