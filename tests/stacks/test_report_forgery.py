"""A test that reports for other tests: each stack's report reader checks
the shape its runner always gives a report, since the report is written in
part by the code under test.

Every attack here is a real suite run by the real runner in tmp_path, the
way the gate runs it: the runner exits 0 and its report, read event by
event with the last word kept, said every test passed. The readers now
name what gave it away; the honest suites beside them (subtests, parallel
tests, log lines that quote a PASS line, output without a newline) keep
passing with no finding.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gatetui.git.snapshot import Snapshot
from gatetui.stacks.base import RunTree
from gatetui.stacks.go.profile import ALONE, TEST_SCRIPT
from gatetui.stacks.go.report import read_go_report
from gatetui.stacks.results import Outcome, Report

pytestmark = pytest.mark.drives  # each runs go or node for real

HAS_GO = shutil.which("go") is not None
needs_go = pytest.mark.skipif(not HAS_GO, reason="go is not installed (Debian: apt-get install golang-go)")

GO_MOD = "module example.com/stats\n\ngo 1.19\n"
# Median's even case adds half the upper middle value to the lower one: [4 1 3 2] gives 3.5.
STATS = """package stats

import "sort"

func Median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 0 {
		return s[n/2-1] + s[n/2]/2
	}
	return s[n/2]
}
"""
STATS_TESTS = """package stats

import "testing"

func TestMedianOdd(t *testing.T) {
	if got := Median([]float64{3, 1, 2}); got != 2 {
		t.Fatalf("Median([3 1 2]) = %v, want 2", got)
	}
}

func TestMedianEven(t *testing.T) {
	if got := Median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Fatalf("Median([4 1 3 2]) = %v, want 2.5", got)
	}
}
"""
ODD_ONLY = STATS_TESTS.split("func TestMedianEven")[0]


def forger(name: str, body: str, imports: str = '"fmt"; "syscall"; "testing"') -> str:
    return f"package stats\n\nimport ({imports})\n\nfunc {name}(t *testing.T) {{\n{body}\n}}\n"


@pytest.fixture(scope="module")
def go_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("go-build")


def go_run(
    folder: Path, cache: Path, files: dict[str, str], alone: bool = False, args: tuple[str, ...] = ()
) -> tuple[int, bytes, Report]:
    """The gate's own go test command on `files`: its exit status, the raw
    report and the report as read."""
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(folder),
        "GOCACHE": str(cache),
        "GOPATH": str(folder / ".gopath"),
        "GOFLAGS": "-mod=mod",
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        **(ALONE.plugin.env_for("/g") if alone else {}),
    }
    done = subprocess.run(
        ["sh", "-c", TEST_SCRIPT, "go-test", str(folder / "r.json"), *args],
        cwd=folder,
        capture_output=True,
        timeout=300,
        env=env,
        check=False,
    )
    raw = (folder / "r.json").read_bytes()
    return (done.returncode, raw, read_go_report(raw, str(folder), RunTree(Snapshot.of_files(files, sha="d" * 40))))


def last_words(raw: bytes) -> dict[str, str]:
    """Each test's last pass/fail/skip event: what a reader keeping the last word believed."""
    said: dict[str, str] = {}
    for line in raw.splitlines():
        event = json.loads(line) if line.startswith(b"{") else {}
        if event.get("Test") and event.get("Action") in ("pass", "fail", "skip"):
            said[event["Test"]] = event["Action"]
    return said


def outcomes(report: Report) -> dict[str, Outcome]:
    return {test_id: result.outcome for test_id, result in report.tests.items()}


BINARY_ENDED = "example.com/stats: the test binary ended without its final PASS or FAIL line"

# name -> (files beside go.mod, stats.go and stats_test.go, the findings in order)
GO_ATTACKS = {
    "a PASS line for the failed test, then syscall.Exit(0)": (
        {"zz_test.go": forger("TestZZZ", '\tfmt.Println("--- PASS: TestMedianEven (0.00s)")\n\tsyscall.Exit(0)')},
        [
            "stats_test.go::TestMedianEven reported twice: fail, then pass",
            "zz_test.go::TestZZZ started and never reported an outcome",
            f"{BINARY_ENDED} (last inside TestMedianEven)",
        ],
    ),
    "the binary's own PASS line forged too": (
        {
            "zz_test.go": forger(
                "TestZZZ", '\tfmt.Print("--- PASS: TestMedianEven (0.00s)\\nPASS\\n")\n\tsyscall.Exit(0)'
            )
        },
        [
            "stats_test.go::TestMedianEven reported twice: fail, then pass",
            "zz_test.go::TestZZZ started and never reported an outcome",
        ],
    ),
    "its own PASS, PASS and an ok line forged": (
        {
            "zz_test.go": forger(
                "TestZZZ",
                '\tfmt.Print("--- PASS: TestMedianEven (0.00s)\\n--- PASS: TestZZZ (0.00s)\\n'
                'PASS\\nok  \\texample.com/stats\\t0.01s\\n")\n\tsyscall.Exit(0)',
            )
        },
        ["stats_test.go::TestMedianEven reported twice: fail, then pass"],
    ),
    "a RUN and PASS pair for the failed test": (
        {
            "zz_test.go": forger(
                "TestZZZ",
                '\tfmt.Print("=== RUN   TestMedianEven\\n--- PASS: TestMedianEven (0.00s)\\n")\n\tsyscall.Exit(0)',
            )
        },
        [
            "stats_test.go::TestMedianEven reported twice: fail, then pass",
            "zz_test.go::TestZZZ started and never reported an outcome",
            f"{BINARY_ENDED} (last inside TestMedianEven)",
        ],
    ),
    "a PASS line built from pieces, then a raw exit call": (
        {
            "zz_test.go": forger(
                "TestZZZ",
                '\trule := strings.Repeat("-", 3)\n'
                '\tfmt.Printf("%s PASS: %s (0.00s)\\n", rule, "TestMedianEven")\n'
                '\tcall := map[string]uintptr{"amd64": 231, "arm64": 94}[runtime.GOARCH]\n'
                "\tsyscall.RawSyscall(call, 0, 0, 0)",
                '"fmt"; "runtime"; "strings"; "syscall"; "testing"',
            )
        },
        [
            "stats_test.go::TestMedianEven reported twice: fail, then pass",
            "zz_test.go::TestZZZ started and never reported an outcome",
            f"{BINARY_ENDED} (last inside TestMedianEven)",
        ],
    ),
    "syscall.Exit(0) before the failing test runs": (
        {"aa_test.go": forger("TestAAA", "\tsyscall.Exit(0)", '"syscall"; "testing"')},
        [f"{BINARY_ENDED} (last inside TestAAA)"],
    ),
}


@needs_go
@pytest.mark.parametrize("name", list(GO_ATTACKS))
def test_a_go_test_reporting_for_others_is_named_and_fails_the_run(tmp_path: Path, go_cache: Path, name: str) -> None:
    extra, findings = GO_ATTACKS[name]
    files = {"go.mod": GO_MOD, "stats.go": STATS, "stats_test.go": STATS_TESTS, **extra}
    status, raw, report = go_run(tmp_path, go_cache, files)
    assert status == 0  # go test says green
    assert "fail" not in last_words(raw).values()  # and so did the last event of every test
    assert list(report.findings) == findings
    assert not report.passed_all


@needs_go
def test_the_forged_test_keeps_its_real_failure_and_says_why(tmp_path: Path, go_cache: Path) -> None:
    extra, _ = GO_ATTACKS["a PASS line for the failed test, then syscall.Exit(0)"]
    _, _, report = go_run(
        tmp_path, go_cache, {"go.mod": GO_MOD, "stats.go": STATS, "stats_test.go": STATS_TESTS, **extra}
    )
    assert outcomes(report) == {
        "stats_test.go::TestMedianOdd": Outcome.PASSED,
        "stats_test.go::TestMedianEven": Outcome.ERROR,
        "zz_test.go::TestZZZ": Outcome.ERROR,
        ".": Outcome.ERROR,
    }
    assert (
        report.tests["stats_test.go::TestMedianEven"].message
        == "stats_test.go::TestMedianEven reported twice: fail, then pass"
    )


@needs_go
def test_a_test_no_file_defines_is_named(tmp_path: Path, go_cache: Path) -> None:
    """A RUN and PASS pair for a test that never ran: the suite passes
    and go exits 0, but no test file of the package defines that test."""
    ghost = forger(
        "TestZZZ", '\tfmt.Print("=== RUN   TestMedianEven\\n--- PASS: TestMedianEven (0.00s)\\n")', '"fmt"; "testing"'
    )
    files = {"go.mod": GO_MOD, "stats.go": STATS, "stats_test.go": ODD_ONLY, "zz_test.go": ghost}
    status, raw, report = go_run(tmp_path, go_cache, files)
    assert (status, last_words(raw)["TestMedianEven"]) == (0, "pass")
    assert list(report.findings) == [".::TestMedianEven was reported, but no test file of its package defines it"]
    assert outcomes(report)[".::TestMedianEven"] is Outcome.ERROR


@needs_go
def test_library_code_that_ends_the_process_leaves_no_final_line(tmp_path: Path, go_cache: Path) -> None:
    """The library itself calls syscall.Exit(0) when a test reaches the
    broken case: test2json gives the test go's own closing pass."""
    exiting = STATS.replace('import "sort"', 'import (\n\t"sort"\n\t"syscall"\n)').replace(
        "return s[n/2-1] + s[n/2]/2", "syscall.Exit(0)\n\t\treturn 0"
    )
    files = {"go.mod": GO_MOD, "stats.go": exiting, "stats_test.go": STATS_TESTS}
    status, raw, report = go_run(tmp_path, go_cache, files)
    assert (status, last_words(raw)) == (0, {"TestMedianOdd": "pass", "TestMedianEven": "pass"})
    assert list(report.findings) == [f"{BINARY_ENDED} (last inside TestMedianEven)"]


@needs_go
def test_os_exit_in_a_test_is_caught_by_go_itself(tmp_path: Path, go_cache: Path) -> None:
    """os.Exit(0) during a test panics under go test (-test.paniconexit0):
    a plain failure, with nothing forged to find."""
    files = {
        "go.mod": GO_MOD,
        "stats.go": STATS,
        "stats_test.go": ODD_ONLY,
        "zz_test.go": forger("TestZZZ", "\tos.Exit(0)", '"os"; "testing"'),
    }
    status, _, report = go_run(tmp_path, go_cache, files)
    assert status == 1 and report.findings == ()
    assert outcomes(report) == {"stats_test.go::TestMedianOdd": Outcome.PASSED, "zz_test.go::TestZZZ": Outcome.FAILED}


# An honest suite with every shape go gives a package: subtests (parents report after their
# children), parallel tests and subtests (interleaved), a log line quoting a PASS line, output
# without a newline (go 1.19's test2json misses the PASS line it runs into), a skip, an example.
HONEST = """package stats

import (
	"fmt"
	"testing"
)

func TestTable(t *testing.T) {
	for _, c := range []struct{ in []float64; want float64 }{{[]float64{1}, 1}, {[]float64{3, 1, 2}, 2}} {
		c := c
		t.Run(fmt.Sprint(len(c.in)), func(t *testing.T) {
			t.Parallel()
			if got := Median(c.in); got != c.want {
				t.Fatalf("Median(%v) = %v", c.in, got)
			}
		})
	}
}

func TestParallelA(t *testing.T) { t.Parallel() }

func TestParallelB(t *testing.T) { t.Parallel(); t.Log("--- PASS: TestMedianOdd (0.00s)") }

func TestQuotes(t *testing.T) { t.Log("runner said:\\n--- FAIL: TestMedianOdd (0.00s)\\nFAIL") }

func TestDots(t *testing.T) { fmt.Print("...") }

func TestSkipped(t *testing.T) { t.Skip("needs a network") }

func ExampleMedian() {
	fmt.Println(Median([]float64{5}))
	// Output: 5
}
"""
HONEST_OUTCOMES = {
    "stats_test.go::TestMedianOdd": Outcome.PASSED,
    "honest_test.go::TestTable": Outcome.PASSED,
    "honest_test.go::TestTable/1": Outcome.PASSED,
    "honest_test.go::TestTable/3": Outcome.PASSED,
    "honest_test.go::TestParallelA": Outcome.PASSED,
    "honest_test.go::TestParallelB": Outcome.PASSED,
    "honest_test.go::TestQuotes": Outcome.PASSED,
    "honest_test.go::TestDots": Outcome.PASSED,
    "honest_test.go::TestSkipped": Outcome.SKIPPED,
    "honest_test.go::ExampleMedian": Outcome.PASSED,
}


@needs_go
@pytest.mark.parametrize("alone", [False, True], ids=["go test", "each test alone"])
def test_an_honest_suite_of_every_shape_has_no_finding(tmp_path: Path, go_cache: Path, alone: bool) -> None:
    files = {
        "go.mod": GO_MOD,
        "stats.go": STATS,
        "stats_test.go": ODD_ONLY,
        "honest_test.go": HONEST,
        "notests/n.go": "package notests\n",
    }
    status, _, report = go_run(tmp_path, go_cache, files, alone)
    assert (status, report.findings) == (0, ())
    assert outcomes(report) == HONEST_OUTCOMES
    assert report.passed_all


@needs_go
def test_a_failing_and_a_panicking_test_are_failures_not_findings(tmp_path: Path, go_cache: Path) -> None:
    panics = forger("TestPanics", '\tvar m map[string]int\n\tm["x"] = 1', '"testing"')
    files = {"go.mod": GO_MOD, "stats.go": STATS, "stats_test.go": STATS_TESTS, "zz_test.go": panics}
    status, _, report = go_run(tmp_path, go_cache, files)
    assert (status, report.findings) == (1, ())
    assert outcomes(report) == {
        "stats_test.go::TestMedianOdd": Outcome.PASSED,
        "stats_test.go::TestMedianEven": Outcome.FAILED,
        "zz_test.go::TestPanics": Outcome.FAILED,
    }
    assert report.tests["zz_test.go::TestPanics"].message == "panic: assignment to entry in nil map [recovered]"


@needs_go
def test_tests_a_timeout_cut_short_are_errors_saying_so_not_findings(tmp_path: Path, go_cache: Path) -> None:
    """go test's own time limit panics the binary inside a running test
    while a parallel one waits: both started and never ended, in a package
    go failed, which says why."""
    slow = (
        'package stats\n\nimport (\n\t"testing"\n\t"time"\n)\n\n'
        "func TestWaits(t *testing.T) { t.Parallel(); time.Sleep(time.Minute) }\n\n"
        "func TestSlow(t *testing.T) { time.Sleep(time.Minute) }\n"
    )
    files = {"go.mod": GO_MOD, "stats.go": STATS, "stats_test.go": ODD_ONLY, "zz_test.go": slow}
    status, _, report = go_run(tmp_path, go_cache, files, args=("-timeout=2s", "./..."))
    assert (status, report.findings) == (1, ())
    assert outcomes(report) == {
        "stats_test.go::TestMedianOdd": Outcome.PASSED,
        "zz_test.go::TestWaits": Outcome.ERROR,
        "zz_test.go::TestSlow": Outcome.ERROR,
    }
    assert report.tests["zz_test.go::TestSlow"].message.startswith("panic: test timed out after 2s")


# ---------------------------------------------------------------- node --test

HAS_NODE = shutil.which("node") is not None
needs_node = pytest.mark.skipif(not HAS_NODE, reason="node is not installed")

MEDIAN = """export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length % 2 === 0) {
    return sorted[middle - 1] + sorted[middle] / 2;
  }
  return sorted[middle];
}
"""
HEADER = 'import assert from "node:assert/strict";\nimport { test } from "node:test";\n\nimport { median } from "../src/median.js";\n'
ODD = HEADER + '\ntest("odd", () => {\n  assert.equal(median([3, 1, 2]), 2);\n});\n'
EVEN = '\ntest("even", () => {\n  assert.equal(median([4, 1, 3, 2]), 2.5);\n});\n'
EXIT = '\ntest("releases the process", () => {\n  process.exit(0);\n});\n'


def node_run(folder: Path, files: dict[str, str]) -> tuple[int, Report]:
    """node --test as the gate runs it (the node profile's command), its
    JUnit read and checked the way the gate reads and checks it."""
    from gatetui.gate.reports.junit import parse_junit
    from gatetui.stacks.node.profile import node_test_command
    from gatetui.stacks.node.report import check_node_report

    files = {
        "package.json": '{"type": "module", "scripts": {"test": "node --test"}}\n',
        "src/median.js": MEDIAN,
        **files,
    }
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    _, command = node_test_command("node --test", None)
    done = subprocess.run(
        ["sh", "-c", command.replace("{report}", str(folder / "r.xml"))],
        cwd=folder,
        capture_output=True,
        timeout=300,
        check=False,
        env={"PATH": os.environ["PATH"], "HOME": str(folder)},
    )
    report = parse_junit((folder / "r.xml").read_bytes(), root=str(folder), ids="node")
    return done.returncode, check_node_report(report, RunTree(Snapshot.of_files(files, sha="e" * 40)))


SILENT = "reported none of the {} it defines: its process ended before they reported"
NODE_ATTACKS = {
    "process.exit(0) after the file's failing test": (
        {"test/median.test.js": ODD, "test/even.test.js": HEADER + EVEN + EXIT},
        {"odd": Outcome.PASSED, "test/even.test.js": Outcome.ERROR},
        [f"test/even.test.js {SILENT.format('2 tests')}"],
    ),
    "the library itself exits when a test reaches the bug": (
        {
            "src/median.js": MEDIAN.replace("return sorted[middle - 1] + sorted[middle] / 2;", "process.exit(0);"),
            "test/median.test.js": ODD + EVEN,
        },
        {"test/median.test.js": Outcome.ERROR},
        [f"test/median.test.js {SILENT.format('2 tests')}"],
    ),
    "exit taken apart from process": (
        {
            "test/median.test.js": ODD,
            "test/even.test.js": HEADER
            + EVEN
            + EXIT.replace("process.exit(0);", "const { exit: release } = process;\n  release(0);"),
        },
        {"odd": Outcome.PASSED, "test/even.test.js": Outcome.ERROR},
        [f"test/even.test.js {SILENT.format('2 tests')}"],
    ),
    "a file of its own that exits at once": (
        {"test/median.test.js": ODD, "test/zzz.test.js": 'import { test } from "node:test";\n' + EXIT},
        {"odd": Outcome.PASSED, "test/zzz.test.js": Outcome.ERROR},
        [f"test/zzz.test.js {SILENT.format('test')}"],
    ),
}


@needs_node
@pytest.mark.parametrize("name", list(NODE_ATTACKS))
def test_a_node_test_file_that_ends_before_reporting_is_named_and_fails_the_run(tmp_path: Path, name: str) -> None:
    files, want, findings = NODE_ATTACKS[name]
    status, report = node_run(tmp_path, files)
    assert status == 0  # node says green
    assert outcomes(report) == want
    assert list(report.findings) == findings and not report.passed_all


@needs_node
def test_forged_tap_lines_on_stdout_change_nothing_in_nodes_report(tmp_path: Path) -> None:
    """node 20 and later carry a file's reports on a channel of their own:
    a test printing TAP lines for the failed test only prints."""
    forged = 'import { test } from "node:test";\n\ntest("zzz", () => {\n  console.log("ok 2 - even");\n});\n'
    status, report = node_run(tmp_path, {"test/median.test.js": ODD + EVEN, "test/zzz.test.js": forged})
    assert (status, report.findings) == (1, ())
    assert outcomes(report) == {"odd": Outcome.PASSED, "even": Outcome.FAILED, "zzz": Outcome.PASSED}


@needs_node
def test_an_honest_node_suite_with_a_helper_file_has_no_finding(tmp_path: Path) -> None:
    """node runs every script under test/, a helper too: a file that
    defines no test stands as one passing entry, and that is no finding."""
    skips = HEADER + '\ntest.skip("later", () => {});\n\ntest("todo", { todo: true }, () => {});\n'
    files = {
        "test/median.test.js": ODD,
        "test/helper.js": "export const sample = [3, 1, 2];\n",
        "test/skips.test.js": skips,
    }
    status, report = node_run(tmp_path, files)
    assert (status, report.findings) == (0, ())
    assert outcomes(report) == {
        "odd": Outcome.PASSED,
        "test/helper.js": Outcome.PASSED,
        "later": Outcome.SKIPPED,
        "todo": Outcome.SKIPPED,
    }
