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

test2json reads the binary's output lines, so a test that prints
`--- PASS: TestX` makes a pass event for TestX, and one that ends its
process with syscall.Exit(0) leaves go test exiting 0. The stream's shape
is therefore checked (shape.py): the first outcome a test reports is
its outcome, a later one is a finding; a test that started and never
reported, a test no test file defines, and a package without go's own
last word are failures.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping

from gatetui.stacks.base import RunTree
from gatetui.stacks.go.shape import Finding, judge
from gatetui.stacks.go.stream import Package
from gatetui.stacks.go.tests import go_test_defs
from gatetui.stacks.results import Outcome, Report, ReportError, TestResult

MAX_BYTES = 64 * 2**20
MESSAGE_LINES = 6
FAILING = {Outcome.FAILED, Outcome.ERROR}
MODULE = re.compile(r"^\s*module\s+\"?([^\s\"]+)\"?", re.M)
# Before go 1.24 a package that does not build has no JSON event: the go
# command itself (never the test binary, whose output test2json wraps)
# writes this line among the events.
NOT_BUILT = re.compile(rb"^FAIL\s+(\S+)\s+\[(build|setup) failed\]\s*$")


def read_go_report(raw: bytes, root: str, tree: RunTree) -> Report:
    """The run's tests by id; ReportError when nothing in it is a go test event."""
    if len(raw) > MAX_BYTES:
        raise ReportError(f"go test's report is over {MAX_BYTES >> 20} MiB: not read")
    packages: dict[str, Package] = {}
    seen = 0
    for event in _events(raw):
        seen += 1
        packages.setdefault(str(event["Package"]), Package()).take(event)
    if not seen:
        raise ReportError("go test wrote no test events (is the test command `go test -json`?)")
    files = _Files(tree)
    results: list[TestResult] = []
    findings: list[Finding] = []
    for name, package in packages.items():
        results += _results(name, package, files, findings)
    return Report.from_results(results, [f.text for f in sorted(findings, key=lambda f: f.rank)])


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


def _results(name: str, package: Package, files: _Files, findings: list[Finding]) -> Iterator[TestResult]:
    """The package's tests by id, a test a finding names as an error with
    the finding for its message; the findings are added to `findings`."""
    folder = files.folder(name)
    judged = judge(package, name, files.tests_in(folder), lambda test: _id(files, folder, test))
    findings += judged.findings
    found: dict[str, str] = {}
    for finding in sorted(judged.findings, key=lambda f: f.rank):
        found.setdefault(finding.test, finding.text)
    for test in dict.fromkeys([*judged.outcomes, *(t for t in found if t)]):
        outcome = Outcome.ERROR if test in found else judged.outcomes[test]
        message = found.get(test) or (_message(package.said.get(test, [])) if outcome is not Outcome.PASSED else "")
        path = files.defining(folder, test.split("/", 1)[0])
        yield TestResult(f"{path}::{test}", outcome, message, path, package.seconds.get(test, 0.0))
    if "" in found:
        yield TestResult(folder or ".", Outcome.ERROR, found[""], None)
    elif package.outcome is Outcome.FAILED and not found and not FAILING & {*judged.outcomes.values()}:
        yield TestResult(folder or ".", Outcome.ERROR, _why(package.output), None)


def _id(files: _Files, folder: str, test: str) -> str:
    return f"{files.defining(folder, test.split('/', 1)[0])}::{test}"


def _message(lines: list[str]) -> str:
    """Why a test did not pass: its last lines, or the panic that ended it
    (a crash or go's time limit), whose goroutine dump says little."""
    said = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith(("===", "---"))]
    panic = next((line for line in said if line.startswith("panic: ")), None)
    return (panic or " | ".join(said[-MESSAGE_LINES:]))[:500]


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
        return package[len(prefix) :] if self.module and package.startswith(prefix) else package

    def defining(self, folder: str, test: str) -> str:
        """`folder/x_test.go` that defines `test`; the folder itself when none does."""
        return self._defs(folder).get(test, folder or ".")

    def tests_in(self, folder: str) -> frozenset[str]:
        """The top-level tests the folder's test files define."""
        return frozenset(self._defs(folder))

    def _defs(self, folder: str) -> dict[str, str]:
        if folder not in self.defined:
            self.defined[folder] = self._read_defs(folder)
        return self.defined[folder]

    def _read_defs(self, folder: str) -> dict[str, str]:
        prefix = f"{folder}/" if folder else ""
        found: dict[str, str] = {}
        for path in sorted(self.tree.paths()):
            if path.startswith(prefix) and "/" not in path[len(prefix) :] and path.endswith("_test.go"):
                for test in go_test_defs(path, self.tree.text(path) or ""):
                    found.setdefault(test.name, path)
        return found
