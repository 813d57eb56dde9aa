"""What `go test -json`'s event stream said of each package, in order.

Only bookkeeping: which tests started, the first outcome each reported and
any it reported after that, what each said, and whether the package's own
last word (its event without a test) came last. Judging that record is
shape.py's; naming tests by file is report.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gatetui.stacks.results import Outcome

MAX_TESTS = 300_000
ACTIONS = {"pass": Outcome.PASSED, "fail": Outcome.FAILED, "skip": Outcome.SKIPPED}
NOT_YET = "\0"  # `Package.last` before any event that is not output


@dataclass
class Package:
    """What the stream said of one package.

    `tests` keeps each test's first outcome: test2json turns any line a
    test prints in the form `--- PASS: TestX` into an event for TestX, so
    a later outcome is kept apart (`later`), never taken as an update.
    `last` is the test the last event other than output named, "" when it
    was the package's own outcome: go's own last word for the package.
    """

    outcome: Outcome | None = None
    output: list[str] = field(default_factory=list)
    tests: dict[str, Outcome] = field(default_factory=dict)
    later: dict[str, list[Outcome]] = field(default_factory=dict)
    started: dict[str, None] = field(default_factory=dict)  # an ordered set
    said: dict[str, list[str]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    last: str = NOT_YET

    def take(self, event: Mapping[str, object]) -> None:
        """One event of this package's."""
        test, action = event.get("Test"), str(event["Action"])
        output = event.get("Output") if isinstance(event.get("Output"), str) else None
        if output is not None:
            where = self.said.setdefault(test, []) if isinstance(test, str) and test else self.output
            where.append(str(output))
        elif isinstance(test, str) and test:
            self._test_event(test, action, event.get("Elapsed"))
        elif action in ACTIONS:
            self.outcome, self.last = ACTIONS[action], ""

    def _test_event(self, test: str, action: str, elapsed: object) -> None:
        room = len(self.tests) + len(self.started) < 2 * MAX_TESTS
        self.last = test
        if action == "run" and room:
            self.started.setdefault(test)
        elif action in ACTIONS and test in self.tests:
            self.later.setdefault(test, []).append(ACTIONS[action])
        elif action in ACTIONS and room:
            self.tests[test] = ACTIONS[action]
            self.seconds[test] = float(elapsed) if isinstance(elapsed, (int, float)) else 0.0

    def said_pass_line(self) -> bool:
        """Whether the binary's own `PASS` line came among the package's output."""
        return any(line.strip() == "PASS" for line in self.output)
