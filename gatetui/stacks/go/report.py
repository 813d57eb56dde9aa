"""Per-test outcomes from `go test -json` (test2json's event stream).

The stream is written by the code under test (test2json reads the test
binary's own output), so it is read as hostile: bounded in size, line by
line, and a line that is not a JSON object of the expected shape is skipped.
Each test is named the way the gate names tests everywhere else,
`path/to/file_test.go::TestName` (`::TestName/sub` for a subtest): the file
is found by reading which test file of the package's folder defines the
function, in the tree the run actually ran (head's, with base's sealed files
or the hidden tests over it). A package that fails without any test failing
(it did not build, its TestMain or init ended the process) is one error
named by its folder, with the reason, never "no report".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from gatetui.stacks.base import RunTree
from gatetui.stacks.go.tests import go_test_defs
from gatetui.stacks.results import Outcome, Report, ReportError, TestResult

MAX_BYTES = 64 * 2**20
MAX_TESTS = 300_000
MESSAGE_LINES = 6
MODULE = re.compile(r"^\s*module\s+\"?([^\s\"]+)\"?", re.M)
ACTIONS = {"pass": Outcome.PASSED, "fail": Outcome.FAILED, "skip": Outcome.SKIPPED}
# Before go 1.24 a package that does not build has no JSON event: the go
# command itself (never the test binary, whose output test2json wraps)
# writes this line among the events.
NOT_BUILT = re.compile(rb"^FAIL\s+(\S+)\s+\[(build|setup) failed\]\s*$")


@dataclass
class _Package:
    """What the stream said of one package."""

    outcome: Outcome | None = None
    output: list[str] = field(default_factory=list)
    tests: dict[str, Outcome] = field(default_factory=dict)
    said: dict[str, list[str]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def read_go_report(raw: bytes, root: str, tree: RunTree) -> Report:
    """The run's tests by id; ReportError when nothing in it is a go test event."""
    if len(raw) > MAX_BYTES:
        raise ReportError(f"go test's report is over {MAX_BYTES >> 20} MiB: not read")
    packages: dict[str, _Package] = {}
    seen = 0
    for event in _events(raw):
        seen += 1
        _take(packages, event)
    if not seen:
        raise ReportError("go test wrote no test events (is the test command `go test -json`?)")
    return Report.from_results(_results(packages, _Files(tree)))


def _events(raw: bytes) -> Iterator[Mapping[str, object]]:
    for line in raw.splitlines():
        not_built = NOT_BUILT.match(line)
        if not_built:
            package, why = (part.decode("utf-8", "replace") for part in not_built.groups())
            yield {"Action": "output", "Package": package, "Output": f"FAIL {package} [{why} failed]\n"}
            yield {"Action": "fail", "Package": package}
        if not line.startswith(b"{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and isinstance(event.get("Package"), str) and isinstance(event.get("Action"), str):
            yield event


def _take(packages: dict[str, _Package], event: Mapping[str, object]) -> None:
    package = packages.setdefault(str(event["Package"]), _Package())
    test, action = event.get("Test"), str(event["Action"])
    output = event.get("Output") if isinstance(event.get("Output"), str) else None
    if isinstance(test, str) and test:
        if output is not None:
            package.said.setdefault(test, []).append(str(output))
        elif action in ACTIONS and (test in package.tests or len(package.tests) < MAX_TESTS):
            package.tests[test] = ACTIONS[action]
            elapsed = event.get("Elapsed")
            package.seconds[test] = float(elapsed) if isinstance(elapsed, (int, float)) else 0.0
    elif output is not None:
        package.output.append(str(output))
    elif action in ACTIONS:
        package.outcome = ACTIONS[action]


def _results(packages: Mapping[str, _Package], files: _Files) -> Iterator[TestResult]:
    for name, package in packages.items():
        folder = files.folder(name)
        for test, outcome in package.tests.items():
            path = files.defining(folder, test.split("/", 1)[0])
            message = _message(package.said.get(test, [])) if outcome is not Outcome.PASSED else ""
            yield TestResult(f"{path}::{test}", outcome, message, path, package.seconds.get(test, 0.0))
        failed_tests = any(o is Outcome.FAILED for o in package.tests.values())
        if package.outcome is Outcome.FAILED and not failed_tests:
            yield TestResult(folder or ".", Outcome.ERROR, _why(package.output), None)


def _message(lines: list[str]) -> str:
    said = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith(("===", "---"))]
    return " | ".join(said[-MESSAGE_LINES:])[:500]


def _why(lines: list[str]) -> str:
    """Why a package failed with no test failing, from its own output."""
    text = "".join(lines)
    if "[build failed]" in text:
        return "the package did not build (see the run's output)"
    if "[setup failed]" in text:
        return "the package's test setup failed (see the run's output)"
    said = [line.strip() for line in lines if line.strip() and line.strip() not in ("FAIL", "PASS")]
    return ("the package failed outside any test: " + " | ".join(said[-MESSAGE_LINES:]))[:500]


class _Files:
    """Which test file of the run's tree defines a test, by package folder."""

    def __init__(self, tree: RunTree):
        self.tree = tree
        self.module = self._module()
        self.defined: dict[str, dict[str, str]] = {}

    def _module(self) -> str:
        match = MODULE.search(self.tree.text("go.mod") or "")
        return match.group(1) if match else ""

    def folder(self, package: str) -> str:
        """The package's folder relative to the module root ("" for the root)."""
        if package == self.module:
            return ""
        prefix = self.module + "/"
        return package[len(prefix):] if self.module and package.startswith(prefix) else package

    def defining(self, folder: str, test: str) -> str:
        """`folder/x_test.go` that defines `test`; the folder itself when none does."""
        if folder not in self.defined:
            self.defined[folder] = self._tests_in(folder)
        return self.defined[folder].get(test, folder or ".")

    def _tests_in(self, folder: str) -> dict[str, str]:
        prefix = f"{folder}/" if folder else ""
        found: dict[str, str] = {}
        for path in sorted(self.tree.paths()):
            if path.startswith(prefix) and "/" not in path[len(prefix):] and path.endswith("_test.go"):
                for test in go_test_defs(path, self.tree.text(path) or ""):
                    found.setdefault(test.name, path)
        return found
