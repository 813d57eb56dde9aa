"""What node's test runner always gives a test file in its JUnit report,
checked against the tree the run ran.

Node runs each test file in a process of its own and reports the file's
tests as they end. A file whose process ends without reporting any (a
test, or the code it calls, runs process.exit(0) before the reports are
out) stands in the report as one testcase named by the file, passed:
exactly what a file that defines no tests gives. Node itself counts it a
pass and exits 0. So a file-level entry that passed, for a file whose
code defines tests (literal titles, read as `tests_kept` reads them), is
a finding that fails the run: the tests it defines never reported.
"""

from __future__ import annotations

from gatetui.stacks.base import RunTree
from gatetui.stacks.node.tests import js_test_defs
from gatetui.stacks.results import Outcome, Report, TestResult


def check_node_report(report: Report, tree: RunTree) -> Report:
    """The report, with each file that reported none of its tests an error and a finding."""
    findings: list[str] = []
    results: list[TestResult] = []
    for test_id, result in report.tests.items():
        silent = _silent_file(result, tree)
        if silent:
            findings.append(silent)
            result = TestResult(test_id, Outcome.ERROR, silent, result.file, result.seconds)
        results.append(result)
    return report if not findings else Report.from_results(results, [*report.findings, *findings])


def _silent_file(result: TestResult, tree: RunTree) -> str:
    """Why a passing entry for a whole file is no pass, or ""."""
    if result.outcome is not Outcome.PASSED or result.file != result.id:
        return ""
    text = tree.text(result.id)
    defined = len(js_test_defs(result.id, text)) if text is not None else 0
    if not defined:
        return ""
    tests = "test" if defined == 1 else f"{defined} tests"
    return f"{result.id} reported none of the {tests} it defines: its process ended before they reported"
