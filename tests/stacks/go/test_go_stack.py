"""The go stack: its test-file scanner, its hooks, its report reader, its
detection and profile. The samples (go_*) gate real repos end to end."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatetui.config import Settings
from gatetui.git.snapshot import Snapshot
from gatetui.stacks import registry
from gatetui.stacks.base import RunTree
from gatetui.stacks.go import STACK
from gatetui.stacks.go.hooks import scan_hooks
from gatetui.stacks.go.profile import ALONE, SHUFFLE, TEST_SCRIPT
from gatetui.stacks.go.report import read_go_report
from gatetui.stacks.go.tests import go_hooks, go_scan, go_test_defs
from gatetui.stacks.results import Outcome, ReportError

HAS_GO = shutil.which("go") is not None
GO_MOD = "module example.com/stats\n\ngo 1.19\n"
TESTS = """package stats

import "testing"

func TestOdd(t *testing.T) {
	if Median([]float64{3, 1, 2}) != 2 {
		t.Fatal("want 2")
	}
}

func TestEmpty(t *testing.T) {}
"""


def names(source: str) -> list[str]:
    return [d.name for d in go_test_defs("x_test.go", source)]


def markers(source: str) -> list[tuple[int, str]]:
    return [(line, kind) for line, kind, _ in go_scan("x_test.go", source, True)[1]]


def test_definitions_are_what_go_test_runs() -> None:
    source = (
        TESTS + "\nfunc Testlower(t *testing.T) {}\nfunc FuzzParse(f *testing.F) {}\n"
        "func ExampleMedian() {}\nfunc TestMain(m *testing.M) {}\nfunc helper() {}\n"
        "func (s suite) TestMethod(t *testing.T) {}\n"
    )
    assert names(source) == ["TestOdd", "TestEmpty", "FuzzParse", "ExampleMedian"]


@pytest.mark.parametrize("call", ['t.Skip("later")', 't.Skipf("%d", 1)', "t.SkipNow()", "b.Skip()", "helper(t).Skip()"])
def test_every_skip_call_is_a_marker(call: str) -> None:
    source = f'package stats\n\nimport "testing"\n\nfunc TestA(t *testing.T) {{\n\t{call}\n}}\n'
    assert markers(source) == [(6, "skip")]


@pytest.mark.parametrize(
    "text", ['s := "t.Skip()"', "s := `t.SkipNow()`", "// t.Skip()", "/* t.Skip() */", "t.Skipped()", "skip := t.Skip"]
)
def test_skip_words_that_are_no_call_are_no_marker(text: str) -> None:
    source = f'package stats\n\nimport "testing"\n\nfunc TestA(t *testing.T) {{\n\t{text}\n}}\n'
    assert markers(source) == []


@pytest.mark.parametrize("constraint", ["//go:build ignore", "// +build ignore", "//go:build linux && !cgo"])
def test_a_build_constraint_before_the_package_is_a_skip(constraint: str) -> None:
    assert markers(f"{constraint}\n\n{TESTS}") == [(1, "skip")]


def test_a_constraint_after_the_package_clause_is_only_a_comment() -> None:
    assert markers(TESTS.replace('import "testing"', '//go:build ignore\nimport "testing"')) == []


def test_hooks_are_test_main_and_init_by_their_source() -> None:
    source = TESTS + "\nfunc TestMain(m *testing.M) { m.Run() }\nfunc init() { x = 1 }\n"
    assert go_hooks(source) == {"TestMain": "func TestMain(m *testing.M) { m.Run() }", "init": "func init() { x = 1 }"}


def snap(files: dict[str, str], sha: str = "b" * 40) -> Snapshot:
    return Snapshot.of_files({"go.mod": GO_MOD, **files}, sha=sha)


def test_a_hook_added_to_a_test_file_is_named_and_an_unchanged_one_is_not() -> None:
    main = "\nfunc TestMain(m *testing.M) { m.Run() }\n"
    base = snap({"a_test.go": TESTS + main, "b_test.go": TESTS})
    head = snap(
        {
            "a_test.go": TESTS + main + "\nfunc TestNew(t *testing.T) {}\n",
            "b_test.go": TESTS + "\nfunc init() { println() }\n",
        }
    )
    scan = scan_hooks(base, head, lambda p: p.endswith("_test.go"))
    assert [str(f) for f in scan.findings] == ["test-run hook `init` added or changed in a test file (b_test.go)"]


@pytest.mark.parametrize(
    "line",
    [
        "if testing.Testing() {",
        'if strings.HasSuffix(os.Args[0], ".test") {',
        'if flag.Lookup("test.v") != nil {',
        'if os.Getenv("GATETUI_RUN") != "" {',
        'if os.Getenv("GOPROXY") == "off" {',
        'if _, ok := os.LookupEnv("GOFLAGS"); ok {',
        "if os.Getuid() >= 420000 {",
        'if u := "http://x"; testing.Testing() {',
    ],
)  # a "//" in a string hides nothing
def test_library_code_asking_for_the_test_binary_is_for_review(line: str) -> None:
    base = snap({"stats.go": "package stats\n\nfunc F() int {\n\treturn 1\n}\n"})
    head = snap({"stats.go": f"package stats\n\nfunc F() int {{\n\t{line}\n\t\treturn 2\n\t}}\n\treturn 1\n}}\n"})
    scan = scan_hooks(base, head, lambda p: p.endswith("_test.go"))
    assert [f.path for f in scan.reaches] == ["stats.go:4"]


# (a home read is named: the home folder is empty in a sandbox; test_forging_library_code.py)
@pytest.mark.parametrize(
    "line",
    [
        'if os.Getenv("HOMEBREW_PREFIX") != "" {',
        "if os.Getuid() == 0 {",
        "// testing.Testing() would tell {",
        "if x := 1; x > 0 { // GOPROXY",
    ],
)
def test_lookalikes_of_test_binary_checks_are_not_for_review(line: str) -> None:
    base = snap({"stats.go": "package stats\n\nfunc F() int {\n\treturn 1\n}\n"})
    head = snap({"stats.go": f"package stats\n\nfunc F() int {{\n\t{line}\n\t\treturn 2\n\t}}\n\treturn 1\n}}\n"})
    assert scan_hooks(base, head, lambda p: p.endswith("_test.go")).reaches == ()


def events(*items: dict[str, object]) -> bytes:
    return b"\n".join(json.dumps(item).encode() for item in items) + b"\n"


def read(raw: bytes, files: dict[str, str] | None = None) -> dict[str, tuple[Outcome, str]]:
    tree = RunTree(
        snap(
            files
            if files is not None
            else {
                "stats_test.go": TESTS,
                "sub/x_test.go": 'package sub\nimport "testing"\nfunc TestX(t *testing.T) {}\n',
            }
        )
    )
    report = read_go_report(raw, "/w", tree)
    return {test_id: (result.outcome, result.message) for test_id, result in report.tests.items()}


def test_tests_are_named_by_the_file_that_defines_them() -> None:
    raw = events(
        {"Action": "run", "Package": "example.com/stats", "Test": "TestOdd"},
        {
            "Action": "output",
            "Package": "example.com/stats",
            "Test": "TestOdd",
            "Output": "    stats_test.go:7: want 2\n",
        },
        {"Action": "fail", "Package": "example.com/stats", "Test": "TestOdd", "Elapsed": 0.01},
        {"Action": "pass", "Package": "example.com/stats", "Test": "TestEmpty"},
        {"Action": "skip", "Package": "example.com/stats/sub", "Test": "TestX"},
        {"Action": "pass", "Package": "example.com/stats/sub", "Test": "TestX/case_1"},
        {"Action": "output", "Package": "example.com/stats/sub", "Output": "PASS\n"},
        {"Action": "pass", "Package": "example.com/stats/sub"},
        {"Action": "fail", "Package": "example.com/stats"},
    )
    assert read(raw) == {
        "stats_test.go::TestOdd": (Outcome.FAILED, "stats_test.go:7: want 2"),
        "stats_test.go::TestEmpty": (Outcome.PASSED, ""),
        "sub/x_test.go::TestX": (Outcome.SKIPPED, ""),
        "sub/x_test.go::TestX/case_1": (Outcome.PASSED, ""),
    }


@pytest.mark.parametrize(
    "raw",
    [
        events(
            {
                "Action": "output",
                "Package": "example.com/stats/sub",
                "Output": "FAIL\texample.com/stats/sub [build failed]\n",
            },
            {"Action": "fail", "Package": "example.com/stats/sub", "Elapsed": 0},
        ),  # go 1.24 and later
        events({"Action": "pass", "Package": "example.com/stats", "Test": "TestEmpty"})
        + b"FAIL\texample.com/stats/sub [build failed]\n",  # before: the go command's own line
    ],
    ids=["event", "line"],
)
def test_a_package_that_did_not_build_is_an_error_named_by_its_folder(raw: bytes) -> None:
    assert read(raw)["sub"] == (Outcome.ERROR, "the package did not build (see the run's output)")


def test_a_package_that_fails_outside_any_test_says_why() -> None:
    raw = events(
        {"Action": "pass", "Package": "example.com/stats", "Test": "TestEmpty"},
        {"Action": "output", "Package": "example.com/stats", "Output": "panic: init went wrong\n"},
        {"Action": "output", "Package": "example.com/stats", "Output": "FAIL\n"},
        {"Action": "fail", "Package": "example.com/stats"},
    )
    assert read(raw)["."] == (Outcome.ERROR, "the package failed outside any test: panic: init went wrong")


def test_a_report_with_no_go_event_is_refused() -> None:
    with pytest.raises(ReportError, match="no test events"):
        read(b'PASS\nok  \texample.com/stats\n{"Time": 1}\n')


@given(st.binary(max_size=2000))
def test_any_bytes_give_a_report_or_a_report_error(raw: bytes) -> None:
    with contextlib.suppress(ReportError):
        read(raw)


@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "Action": st.sampled_from(["run", "pass", "fail", "skip", "output", "pause", "cont", "bench", "odd"]),
                "Package": st.sampled_from(["example.com/stats", "example.com/stats/sub", "other.org/x", ""]),
                "Test": st.one_of(st.none(), st.text(max_size=12)),
                "Output": st.one_of(st.none(), st.text(max_size=30)),
                "Elapsed": st.one_of(st.none(), st.floats(allow_nan=False), st.text(max_size=3)),
            }
        ),
        min_size=1,
        max_size=30,
    )
)
def test_any_event_stream_is_read_without_raising(items: list[dict[str, object]]) -> None:
    report = read(events(*items))
    assert all("::" in test_id or outcome is Outcome.ERROR for test_id, (outcome, _) in report.items())


@given(st.text(max_size=400))
def test_the_scanner_answers_any_text(text: str) -> None:
    defs, found = go_scan("x_test.go", text, True)
    assert all(d.line >= 1 for d in defs) and all(line >= 1 for line, _, _ in found)


def test_go_mod_means_go_and_python_still_wins_beside_it() -> None:
    assert registry.detect(snap({"a_test.go": TESTS}), Settings()).name == "go"
    both = Snapshot.of_files({"go.mod": GO_MOD, "pyproject.toml": "[project]\nname = 'x'\n"}, sha="c" * 40)
    assert registry.detect(both, Settings()).name == "python"


def test_the_profile_seals_test_files_and_testdata_and_shuffles_by_seed() -> None:
    profile = registry.load_profile(snap({"stats_test.go": TESTS, "testdata/in.txt": "1\n"}))
    assert (profile.stack, profile.suite.runner, profile.suite.sealed_by_default) == (
        STACK,
        "go",
        ("**/*_test.go", "**/testdata/**"),
    )
    assert profile.suite.shuffle == SHUFFLE and SHUFFLE.env_for("/g", seed=7) == {"GOFLAGS": "-shuffle=7"}
    assert profile.is_test_file("sub/a_test.go") and not profile.is_test_file("sub/a.go")


@pytest.mark.skipif(not HAS_GO, reason="go is not installed (Debian: apt-get install golang-go; .ci/run installs it)")
@pytest.mark.drives
def test_the_reader_reads_what_a_real_go_test_writes(tmp_path: Path) -> None:
    files = {
        "go.mod": GO_MOD,
        "stats.go": "package stats\n\nfunc Median(xs []float64) float64 { return xs[0] }\n",
        "stats_test.go": TESTS,
        "broken/b.go": 'package broken\n\nfunc F() int { return "x" }\n',
        "broken/b_test.go": 'package broken\n\nimport "testing"\n\nfunc TestB(t *testing.T) {}\n',
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    done = subprocess.run(
        ["go", "test", "-json", "-count=1", "./..."],
        cwd=tmp_path,
        capture_output=True,
        timeout=300,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "GOCACHE": str(tmp_path / "c"),
            "GOFLAGS": "-mod=mod",
            "GOPROXY": "off",
        },
    )
    report = read_go_report(done.stdout, str(tmp_path), RunTree(Snapshot.of_files(files, sha="d" * 40)))
    assert {i: r.outcome for i, r in report.tests.items()} == {
        "stats_test.go::TestOdd": Outcome.FAILED,
        "stats_test.go::TestEmpty": Outcome.PASSED,
        "broken": Outcome.ERROR,
    }


@pytest.mark.skipif(not HAS_GO, reason="go is not installed (Debian: apt-get install golang-go; .ci/run installs it)")
@pytest.mark.drives
def test_each_test_alone_breaks_a_test_that_needs_one_before_it(tmp_path: Path) -> None:
    """Run 1 with random_order: go test cannot reverse a
    package, so each test runs alone; the one that leans on the test
    declared before it fails every time, the rest pass, and a package
    that does not build still says so."""
    chained = (
        'package stats\n\nimport "testing"\n\nvar seen []int\n\n'
        "func TestFirst(t *testing.T) { seen = append(seen, 1) }\n\n"
        "func TestSecond(t *testing.T) { if len(seen) != 1 { t.Fatal(seen) } }\n"
    )
    files = {
        "go.mod": GO_MOD,
        "stats.go": "package stats\n",
        "chain_test.go": chained,
        "broken/b.go": 'package broken\n\nfunc F() int { return "x" }\n',
        "broken/b_test.go": 'package broken\n\nimport "testing"\n\nfunc TestB(t *testing.T) {}\n',
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "GOCACHE": str(tmp_path / "c"),
        "GOFLAGS": "-mod=mod",
        "GOPROXY": "off",
        **ALONE.plugin.env_for("/g"),
    }
    done = subprocess.run(
        ["sh", "-c", TEST_SCRIPT, "go-test", str(tmp_path / "r.json")],
        cwd=tmp_path,
        capture_output=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 1
    report = read_go_report(
        (tmp_path / "r.json").read_bytes(), str(tmp_path), RunTree(Snapshot.of_files(files, sha="d" * 40))
    )
    assert {i: r.outcome for i, r in report.tests.items()} == {
        "chain_test.go::TestFirst": Outcome.PASSED,
        "chain_test.go::TestSecond": Outcome.FAILED,
        "broken": Outcome.ERROR,
    }
    assert ALONE.label == "each test alone"
