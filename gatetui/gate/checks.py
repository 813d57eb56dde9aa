"""The gate's vocabulary: check ids, titles, statuses, results and verdicts.

Every consumer (CLI, JSON, JUnit, later the TUI and the submit server) names
checks through this module, so the words in DESIGN.md exist in one place.
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

    def __str__(self) -> str:
        return self.value

    @property
    def title(self) -> str:  # type: ignore[override]  # the check's title, not str.title(): a str enum
        return TITLES[self]


TITLES: dict[CheckId, str] = {
    CheckId.INSTALL: "installs from scratch",
    CheckId.RUNS: "suite passes 3 of 3 runs",
    CheckId.TESTS_KEPT: "no tests removed",
    CheckId.NO_NEW_SKIPS: "nothing new skipped or focused",
    CheckId.OLD_TESTS: "old tests pass on new code",
    CheckId.HIDDEN: "hidden tests pass",
}

# The order checks are listed in everywhere: the article's order.
CHECK_ORDER: tuple[CheckId, ...] = tuple(CheckId)


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
        """The article's one line per check: `pass <title>` / `FAIL <title>: <detail>`."""
        word = {
            Status.PASS: "pass",
            Status.FAIL: "FAIL",
            Status.REVIEW: "REVIEW",
            Status.ERROR: "ERROR",
            Status.SKIPPED: "skip",
        }.get(self.status, str(self.status))
        detail = self.detail.splitlines()[0] if self.detail else ""
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


def decide(results: list[CheckResult], old_tests_fail_is_fatal: bool = False) -> Verdict:
    """Fold check results into the verdict.

    A violation anywhere but `old_tests` fails the change. Then a gate error
    wins over `review`: a person should not review a run the gate could not
    finish. `old_tests` alone failing asks a person, unless policy says fail;
    so does a check that found something to review.
    """
    failed = {r.id for r in results if r.status is Status.FAIL}
    if failed - {CheckId.OLD_TESTS}:
        return Verdict.FAIL
    if CheckId.OLD_TESTS in failed and old_tests_fail_is_fatal:
        return Verdict.FAIL
    if any(r.status is Status.ERROR for r in results):
        return Verdict.ERROR
    if failed or any(r.status is Status.REVIEW for r in results):
        return Verdict.REVIEW
    return Verdict.PASS
