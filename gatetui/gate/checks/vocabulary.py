"""The gate's words: check ids, statuses, results and verdicts.

Every consumer (CLI, JSON, JUnit, the TUI and the submit server) names
checks through gatetui.gate.checks, so the words in DESIGN.md exist in one
place. What each check is (its title, what it needs, how it counts) is
declared in registry.py; this module holds only the words those
declarations are made of.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class CheckId(str, Enum):
    INSTALL = "install"
    RUNS = "runs"
    TESTS_KEPT = "tests_kept"
    NO_NEW_SKIPS = "no_new_skips"
    OLD_TESTS = "old_tests"
    HIDDEN = "hidden"
    COVERED = "covered"
    BITES = "bites"

    def __str__(self) -> str:
        return self.value

    @property
    def title(self) -> str:  # type: ignore[override]  # the check's title, not str.title(): a str enum
        """What the check claims, as every screen and line names it."""
        return _TITLES[self]


_TITLES: dict[CheckId, str] = {
    CheckId.INSTALL: "installs from scratch",
    CheckId.RUNS: "suite passes 3 of 3 runs",
    CheckId.TESTS_KEPT: "no tests removed",
    CheckId.NO_NEW_SKIPS: "nothing new skipped or focused",
    CheckId.OLD_TESTS: "old tests pass on new code",
    CheckId.HIDDEN: "hidden tests pass",
    CheckId.COVERED: "changed code runs under the tests",
    CheckId.BITES: "the tests catch bugs in the changed code",
}


class Status(str, Enum):
    """Where a check is. The last five are final.

    `error` is the gate's own failure (a backend that died, an install that
    hit its time limit): never the agent's fault, always shown apart from a
    violation. `review` is a finding a person should weigh (the wheel holds
    code the commit does not), not proof of a violation. `skipped` is a
    check that was not run, with the reason in its detail (not configured,
    or nothing to run it on).
    """

    WAITING = "waiting"
    RUNNING = "running"
    PASS = "pass"
    FAIL = "fail"
    REVIEW = "review"
    ERROR = "error"
    SKIPPED = "skipped"

    def __str__(self) -> str:
        return self.value

    @property
    def final(self) -> bool:
        return self not in (Status.WAITING, Status.RUNNING)


DIFF_ONLY = "diff only"  # a pass from the diff alone (the runs never ran): shown with its detail


@dataclass(frozen=True)
class CheckResult:
    """A finished check, as every consumer shows it."""

    id: CheckId
    status: Status
    detail: str = ""
    seconds: float = 0.0

    @property
    def title(self) -> str:
        return self.id.title

    @property
    def ok(self) -> bool:
        """Not a violation and not a failure of the gate."""
        return self.status in (Status.PASS, Status.SKIPPED)

    def line(self) -> str:
        """One line per check, as the agent and CI read it: `pass <title>` / `FAIL <title>: <detail>`."""
        word = {
            Status.PASS: "pass",
            Status.FAIL: "FAIL",
            Status.REVIEW: "REVIEW",
            Status.ERROR: "ERROR",
            Status.SKIPPED: "skip",
        }.get(self.status, str(self.status))
        detail = self.detail.split("\n", 1)[0]  # the gate's own line break: head's others are text, shown escaped
        if (self.status is Status.PASS and not detail.startswith(DIFF_ONLY)) or not detail:
            return f"{word} {self.title}"  # a pass that is only the diff's says so
        return f"{word} {self.title}: {detail}"


class Verdict(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    REVIEW = "review"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value
