"""The shape go test always gives a package's events, and findings where
a stream lacks it.

test2json reads the test binary's output lines, so whatever a test prints
in go's own form becomes an event: `--- PASS: TestX` is a pass for TestX,
even after TestX failed. A test can also end its process with a green
exit that go test does not catch (syscall.Exit(0): only os.Exit is
watched). What such a test leaves is a stream go itself never writes,
and each of these is a finding that fails the run:

- a test reports one outcome; a second is not an update
  ("TestX reported twice: fail, then pass");
- a test that started reports an outcome; one that never did is where
  the process ended (in a package go itself failed, a timeout or a crash,
  it is an error of that test and no finding). Go 1.19's test2json misses an outcome line that a
  test's own output, printed without a newline, runs into
  (`dots...--- PASS: TestX (0.01s)`), so such a line is read where it
  stands, in the test's own output, before the test is held to have none;
- a top-level test is a function of its package's test files, where the
  gate can read them: any other name was printed;
- a package ends with go's own outcome for it, after the binary's own
  PASS line when it passed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from gatetui.stacks.go.stream import ACTIONS, NOT_YET, Package
from gatetui.stacks.results import Outcome

WORDS = {outcome: word for word, outcome in ACTIONS.items()}


@dataclass(frozen=True)
class Finding:
    """One way a package's stream is not what go writes; `test` is the test
    it makes an error of ("" for the package), `rank` orders findings from
    the most telling (a failure reported over) to the least."""

    rank: int
    test: str
    text: str


@dataclass(frozen=True)
class Judged:
    """A package's tests: each one's outcome, and the findings."""

    outcomes: dict[str, Outcome]
    findings: tuple[Finding, ...]


def judge(package: Package, name: str, defined: frozenset[str], ids: Callable[[str], str]) -> Judged:
    """The package's outcomes and findings; `defined` holds the top-level
    tests its folder's test files define (empty when the gate cannot tell),
    `ids` names a test the way the gate does."""
    outcomes = dict(package.tests)
    for test in package.started:
        if test not in outcomes and (swallowed := _swallowed(test, package.said.get(test, []))):
            outcomes[test] = swallowed
        elif test not in outcomes and package.outcome is Outcome.FAILED:
            outcomes[test] = Outcome.ERROR  # go failed the package while the test ran: its output says why
    findings = [
        *_twice(package, ids),
        *_never_ended(package, outcomes, ids),
        *_undefined(package, defined, ids),
        *_no_last_word(package, name),
    ]
    return Judged(outcomes, tuple(findings))


def _twice(package: Package, ids: Callable[[str], str]) -> Iterator[Finding]:
    for test, later in package.later.items():
        first = package.tests[test]
        said = ", then ".join([WORDS[first], ", ".join(WORDS[o] for o in later)])
        times = "twice" if len(later) == 1 else f"{len(later) + 1} times"
        yield Finding(0 if first is not Outcome.PASSED else 1, test, f"{ids(test)} reported {times}: {said}")


def _never_ended(package: Package, outcomes: dict[str, Outcome], ids: Callable[[str], str]) -> Iterator[Finding]:
    for test in package.started:
        if test not in outcomes:
            yield Finding(2, test, f"{ids(test)} started and never reported an outcome")


def _undefined(package: Package, defined: frozenset[str], ids: Callable[[str], str]) -> Iterator[Finding]:
    if not defined:
        return
    for test in dict.fromkeys([*package.started, *package.tests]):
        if "/" not in test and test not in defined:
            yield Finding(3, test, f"{ids(test)} was reported, but no test file of its package defines it")


def _no_last_word(package: Package, name: str) -> Iterator[Finding]:
    ended = package.last == "" and (package.outcome is not Outcome.PASSED or package.said_pass_line())
    if not ended:
        inside = f" (last inside {package.last})" if package.last not in ("", NOT_YET) else ""
        yield Finding(4, "", f"{name}: the test binary ended without its final PASS or FAIL line{inside}")


def _swallowed(test: str, said: list[str]) -> Outcome | None:
    """The outcome line of `test` run into the end of a line of its own last output."""
    line = re.compile(rf"--- (PASS|FAIL|SKIP): {re.escape(test)} \([0-9.]+s\)\s*$")
    for text in reversed(said[-20:]):
        found = line.search(text)
        if found:
            return ACTIONS[found.group(1).lower()]
    return None
