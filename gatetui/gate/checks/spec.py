"""What a check declares about itself: what it is judged from, when the
runner announces it, and what a failure of it makes of the verdict.

The runner schedules checks from these declarations and `decide` weighs
results by them, so neither names a check to know how to treat it (the way
pytest's plugins declare their hooks and pluggy calls only those).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum

from gatetui.gate.checks.vocabulary import CheckId, Status, Verdict


class Need(str, Enum):
    """Evidence a check is judged from, in the order a gate run gets it.

    Every check has head's tree; the install makes INSTALL, so it needs
    nothing else. A check that needs the install and cannot have it is not
    run; one that also reads the diff says what the diff said.
    """

    DIFF = "diff"  # base...head, read before any sandbox starts
    INSTALL = "install"  # head installed from scratch, in a fresh environment
    HEAD_RUNS = "head_runs"  # head's suite three times, each on a copy of the install
    OLD_TESTS_RUN = "old_tests_run"  # base's tests over head's code, on a copy of its own
    HIDDEN_TESTS = "hidden_tests"  # the hidden tests over head, on a copy of its own (when configured)
    BASE_OWN = "base_own"  # base's own suite on base's code: the baseline, or asked to tell whose a finding is
    MUTANT_RUNS = "mutant_runs"  # the tests that reach a changed line, once per mutant of it, each on a copy


class Phase(IntEnum):
    """When the runner announces a check (CheckStarted), earliest first."""

    PLAN = 1  # with the plan, before any sandbox: answered there when the plan or the diff can
    INSTALL = 2  # when head's install begins
    SUITE = 3  # when the copies of the install begin their runs


class Counts(str, Enum):
    """What a `fail` of the check makes of the verdict."""

    FAIL = "fail"  # the change fails
    REVIEW = "review"  # a person decides, unless the gate's policy makes it a failure


# How much each weighed result says against the change, least first: a
# failure outweighs the gate's own error, which outweighs a review (a person
# should not review a run the gate could not finish).
SEVERITY: tuple[Verdict, ...] = (Verdict.PASS, Verdict.REVIEW, Verdict.ERROR, Verdict.FAIL)


@dataclass(frozen=True)
class CheckSpec:
    """One check, as the runner schedules it and the verdict weighs it."""

    id: CheckId
    needs: frozenset[Need]
    announced: Phase
    failure: Counts = Counts.FAIL

    @property
    def title(self) -> str:
        return self.id.title

    @property
    def reads_diff(self) -> bool:
        """Whether the diff alone can answer for this check when the runs
        never come (an install that failed)."""
        return Need.DIFF in self.needs

    def weigh(self, status: Status, policy_fails: bool = False) -> Verdict:
        """What one result of this check asks of the verdict on its own.

        `policy_fails`: the gate's policy turns a failure that would go to
        review into a failure (on_old_tests_fail = "fail", a sealed file
        forbidden to change, evidence that head bent the runner). `error` is
        the gate's failure, never the change's: it asks for error.
        """
        if status is Status.FAIL:
            hard = self.failure is Counts.FAIL or policy_fails
            return Verdict.FAIL if hard else Verdict.REVIEW
        if status is Status.ERROR:
            return Verdict.ERROR
        return Verdict.REVIEW if status is Status.REVIEW else Verdict.PASS
