"""Red team, diff rules: a test file that forges the report for the tests a
change broke, read from the diff in go, node and python alike.

The attack (the `go_forged_pass` sample, which reached `pass` before this
rule): a new test file whose test runs last prints `--- PASS: TestX` for
each test the bug broke, then ends the binary with `syscall.Exit(0)`, which
go does not count as a failure. Its two halves are what the rule reads in
the added lines of test files: text shaped as the runner's report, and an
end of the process with nothing failed. Each is shown to a person (reaches:
old_tests fails, verdict review). The honest shapes beside them stay
unnamed: a TestMain's `os.Exit(m.Run())`, a test that swaps `os.Stdout` to
capture output, a subprocess's `sys.exit` inside a string.
"""

from __future__ import annotations

import pytest

from gatetui.git.snapshot import Snapshot
from gatetui.stacks.go.hooks import scan_hooks as go_scan
from gatetui.stacks.node.hooks import scan_hooks as node_scan
from gatetui.stacks.python.hooks import scan_hooks as python_scan

GO_TEST = (
    'package stats\n\nimport (\n\t"fmt"\n\t"os"\n\t"syscall"\n\t"testing"\n)\n\nfunc TestZZSummary(t *testing.T) {\n'
)


def go_reaches(line: str, base_has_file: bool = False) -> list[tuple[str, str]]:
    base = Snapshot.of_files(
        {"stats.go": "package stats\n", **({"zz_test.go": GO_TEST + "}\n"} if base_has_file else {})}
    )
    head = Snapshot.of_files({"stats.go": "package stats\n", "zz_test.go": GO_TEST + line + "\n}\n"})
    return [(f.path, f.what) for f in go_scan(base, head, lambda p: p.endswith("_test.go")).reaches]


GO_REPORT = "test code prints what reads as go test's results"
GO_END = "test code ends the test binary or takes its output"


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ('\t\tfmt.Printf("--- PASS: %s (0.00s)\\n", name)', GO_REPORT),
        ('\tfmt.Println("=== RUN   TestMedianEven")', GO_REPORT),
        ('\tfmt.Print("--- FAIL: TestOther (0.00s)\\n")', GO_REPORT),
        ("\tsyscall.Exit(0)", GO_END),
        ("\tunix.Exit(0)", GO_END),
        ('\tsyscall.Exec("/bin/true", []string{"true"}, nil)', GO_END),
        ("\tsyscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)", GO_END),
        ("\truntime.Goexit()", GO_END),
        ("\tos.Exit(0)", GO_END),
        ("\tquit := os.Exit", GO_END),
        ('\tflag.Set("test.paniconexit0", "false")', GO_END),
        ("//go:linkname exit os.Exit", "test code links to another package's private symbols"),
    ],
)
def test_go_test_code_that_forges_a_report_is_named(line: str, what: str) -> None:
    assert go_reaches(line) == [("zz_test.go:11", f"{what}: {line.strip()}")]
    # the same line added to a test file base already has
    assert go_reaches(line, base_has_file=True) == [("zz_test.go:11", f"{what}: {line.strip()}")]


@pytest.mark.parametrize(
    "line",
    [
        "\tos.Exit(m.Run())",  # how go's documentation ends a TestMain
        "\tos.Exit(code)",
        "\tos.Stdout = w  // capture what Print writes",
        '\tt.Log("PASS")',
        '\twant := "PASS"',
        '\tif got := Status(); got != "FAIL" {',
        "\t// --- PASS: is what go test prints",
        '\tfmt.Println("ok")',
    ],
)
def test_go_test_code_that_looks_like_it_is_not_named(line: str) -> None:
    assert go_reaches(line) == []


def test_a_go_library_line_is_still_judged_as_library_code() -> None:
    base = Snapshot.of_files({"stats.go": "package stats\n"})
    head = Snapshot.of_files({"stats.go": 'package stats\n\nconst verdict = "PASS"\n'})
    assert [str(f) for f in go_scan(base, head, lambda p: p.endswith("_test.go")).reaches] == [
        'library code prints what reads as go test\'s results: const verdict = "PASS" (stats.go:3)'
    ]


NODE_TEST = 'import { test } from "node:test";\n\ntest("summary", () => {\n'


def node_reaches(line: str) -> list[tuple[str, str]]:
    base = Snapshot.of_files({"src/median.js": "export const x = 1;\n"})
    head = Snapshot.of_files(
        {"src/median.js": "export const x = 1;\n", "test/zz.test.js": NODE_TEST + line + "\n});\n"}
    )
    return [(f.path, f.what) for f in node_scan(base, head, lambda p: p.startswith("test/")).reaches]


NODE_REPORT = "test code prints what reads as the test runner's report"
NODE_END = "test code ends the process"


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("  names.forEach((name, i) => console.log(`ok ${i + 1} - ${name}`));", NODE_REPORT),
        ('  console.log("ok 4 - median of an even-length list");', NODE_REPORT),
        ('  console.log("not ok " + n + " - x # SKIP");', NODE_REPORT),
        ("  console.log(`1..${names.length}\\n# pass ${names.length}\\n# fail 0`);", NODE_REPORT),
        ('  process.stdout.write("# fail 0\\n");', NODE_REPORT),
        ('  writeFileSync(out, `<testcase name="${name}"/>`);', NODE_REPORT),
        ("  process.exit(0);", NODE_END),
        ("  process.reallyExit(0);", NODE_END),
        ('  process.kill(process.pid, "SIGKILL");', NODE_END),
        ("  process.exitCode = 0;", NODE_END),
        ('  process["ex" + "it"](0);', NODE_END),
    ],
)
def test_node_test_code_that_forges_a_report_is_named(line: str, what: str) -> None:
    assert node_reaches(line) == [("test/zz.test.js:4", f"{what}: {line.strip()}")]


@pytest.mark.parametrize(
    "line",
    [
        "  assert.equal(median([4, 1, 3, 2]), 2.5);",
        '  test("ok then", () => {});',
        '  const status = "ok";',
        "  const pid = process.pid;",
        "  // process.exit(0) would end every file's run",
    ],
)
def test_node_test_code_that_looks_like_it_is_not_named(line: str) -> None:
    assert node_reaches(line) == []


PY_TEST = "import os, signal, subprocess, sys\n\nimport pytest\n\n\ndef test_zz_summary():\n"


def python_reaches(line: str, base: dict[str, str] | None = None) -> list[tuple[str, str]]:
    files = base or {"p/core.py": ""}
    head = {**files, "tests/test_zz.py": PY_TEST + line + "\n"}
    found = python_scan(Snapshot.of_files(files), Snapshot.of_files(head), lambda p: p.startswith("tests/"))
    return [(f.path, f.what) for f in found.reaches]


PY_END = "test code ends the process"
PY_REPORT = "test code writes what reads as the runner's report"


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("    os._exit(0)", PY_END),
        ("    sys.exit(0)", PY_END),
        ("    raise SystemExit(0)", PY_END),
        ("    raise SystemExit", PY_END),
        ("    os.kill(os.getpid(), signal.SIGKILL)", PY_END),
        ('    print(\'<testcase classname="tests.test_math" name="test_mul"/>\')', PY_REPORT),
        ('    sys.stdout.write("<testsuite errors=\\"0\\" failures=\\"0\\">")', PY_REPORT),
    ],
)
def test_python_test_code_that_forges_a_report_is_named(line: str, what: str) -> None:
    assert python_reaches(line) == [("tests/test_zz.py:7", f"{what}: {line.strip()}")]


@pytest.mark.parametrize(
    "line",
    [
        '    subprocess.run([sys.executable, "-c", "import sys; sys.exit(0)"], check=True)',
        "    sys.exit(main())",
        "    with pytest.raises(SystemExit):",
        "    sys.exit(pytest.main([__file__]))",
        "    # os._exit(0) would end the run",
        '    assert report.startswith("ok")',
    ],
)
def test_python_test_code_that_looks_like_it_is_not_named(line: str) -> None:
    assert python_reaches(line) == []


def test_a_pytest_plugins_own_tests_are_not_read() -> None:
    """A project that is a pytest plugin at base writes runner-shaped text in
    its tests by design (pytester), as its library reaches into the runner."""
    plugin = '[project]\nname = "p"\nversion = "1"\n\n[project.entry-points.pytest11]\np = "p.plugin"\n'
    assert python_reaches("    os._exit(0)", {"pyproject.toml": plugin, "p/core.py": ""}) == []
