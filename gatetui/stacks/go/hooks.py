"""Ways to bend a `go test` verdict from outside the tests themselves.

A test binary runs `TestMain` instead of the tests when a test file defines
one, and every `init` of the package before it: either can run no test and
exit 0. Base's own tests run on head's code (old_tests), so a hook head adds
or changes in a test file fails old_tests, the way a new interpreter startup
hook does for python. Library code that asks whether it runs under
`go test` (`testing.Testing()`, the test binary's flags or name) can be
right only there: that is asked of a person (review).

`go test -json` believes what the test binary prints, and every `init` of a
package runs in it before any test: library code that prints what reads as
go test's results (`--- PASS: TestMean`), or that ends the process from a
package other than `main`, can forge a run whole without asking for the
runner, so such lines are shown too; as are `//go:linkname` directives (a
hand on another package's private symbols, the test runner's included) and
test-runner words in the library's strings (`"-test."` flags looked for in
`os.Args`, however the loop is spelled).

Nor need library code name the runner to know it runs under one: a
`testing.` frame on the caller's stack (`runtime.Callers`, `runtime.Caller`,
`debug.Stack`) says so, and an empty home folder says "sandbox". Those
lines are shown as python's frame inspection is. A test file head adds or
changes is read for the forgery's two halves as well: lines that read as
go test's report, and an end of the process go does not count as a failure
(`syscall.Exit(0)` from a test that runs last); a TestMain's
`os.Exit(m.Run())` is how go's own documentation ends one and is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gatetui.git.snapshot import Snapshot
from gatetui.stacks.base import Finding, HookScan
from gatetui.stacks.go.tests import go_hooks
from gatetui.stacks.lines import added, without_comment

RUNNER_PROBE = re.compile(
    r"\btesting\.Testing\s*\(|\bflag\.Lookup\s*\(\s*\"test\.|\bos\.Args\s*\[\s*0\s*\].*\.test\b"
    r"|\bGOTEST\w*|/tmp/gatetui\b|\bGATETUI_\w+|\.gatetui-go\b"
    # what the gate sets in every run, which a person's own `go test` does not have
    r"|\bos\.(?:Getenv|LookupEnv)\s*\(\s*\"(?:GOFLAGS|GOPROXY|GOTOOLCHAIN|GOCACHE|GOMODCACHE)\""
    r"|\bGete?uid\s*\(\s*\)\s*(?:[<>]=?|[=!]=)\s*\d{5,}"
)


# What reads as `go test`'s own report: a test's result line, a run's last line.
FORGED_REPORT = re.compile(
    r"(?:===|---)\s+(?:RUN|PAUSE|CONT|NAME|PASS|FAIL|SKIP)\b|\"(?:PASS|FAIL)(?:\\n)?\"|\"ok\s+\S|\\n(?:PASS|FAIL)\b"
)
PROCESS_END = re.compile(
    r"\b(?:os\.Exit|syscall\.Exit|unix\.Exit|runtime\.Goexit|syscall\.Kill|unix\.Kill)\b"
    r"|\bos\.(?:Stdout|Stderr)\s*=[^=]"
)
LINKNAME = re.compile(r"^\s*//go:linkname\b")
# the caller's stack, where a `testing.tRunner` frame says "under go test"
CALLER = re.compile(
    r"\bruntime\.(?:Callers|Caller|CallersFrames|Stack|GoroutineProfile)\s*\("
    r"|\bdebug\.(?:Stack|PrintStack)\s*\(|\bpprof\.Lookup\s*\("
)
# the home folder, empty in a sandbox and full on a person's machine
HOME_READ = re.compile(
    r"\bos\.User(?:Home|Config|Cache)Dir\s*\(|\b(?:os|syscall)\.(?:Getenv|LookupEnv)\s*\(\s*\"HOME\""
    r"|\.HomeDir\b|\$\{?HOME\b"
)
# In a test file: go test's result lines, and ends of the binary that go counts as no
# failure (an exit 0 past the testing package's own os.Exit(0) check, the binary replaced).
TEST_FORGED_REPORT = re.compile(r"(?:===|---)\s+(?:RUN|PAUSE|CONT|NAME|PASS|FAIL|SKIP)\b|\\n(?:PASS|FAIL)\b")
TEST_PROCESS_END = re.compile(
    r"\b(?:syscall|unix)\.(?:Exit|Exec)\b|\bSYS_EXIT(?:_GROUP)?\b|\bruntime\.Goexit\b"
    r"|\bos\.Exit\s*\(\s*0\s*\)|\bos\.Exit\b(?!\s*\()|\btest\.paniconexit0\b"
)
# a test flag's name in a string: `-test.run`, `--test.v`
TEST_FLAG = re.compile(r"\"-{1,2}test\.")
PACKAGE = re.compile(r"^package\s+(\w+)", re.M)


def scan_hooks(base: Snapshot, head: Snapshot, is_test_file: Callable[[str], bool]) -> HookScan:
    changed = [p for p in head.paths if p.endswith(".go") and (p not in base or base.ident(p) != head.ident(p))]
    findings = []
    for path in (p for p in changed if is_test_file(p)):
        before, after = go_hooks(base.text(path) or ""), go_hooks(head.text(path) or "")
        findings += [
            Finding(path, f"test-run hook `{name}` added or changed in a test file")
            for name in sorted(after)
            if before.get(name) != after[name]
        ]
    reaches = [
        Finding(f"{path}:{n}", f"{_who(is_test_file(path))} {what}: {line.strip()[:80]}")
        for path in changed
        for n, line in added(base.text(path) or "", head.text(path) or "")
        if (what := _test_concern(line) if is_test_file(path) else _concern(line, _package(head.text(path) or "")))
    ]
    return HookScan(findings=tuple(findings), reaches=tuple(reaches))


def _who(test: bool) -> str:
    return "test code" if test else "library code"


def _concern(line: str, package: str) -> str | None:
    """What an added library line does that a person should look at."""
    if LINKNAME.match(line):
        return "links to another package's private symbols"
    code = without_comment(line, "//")
    if RUNNER_PROBE.search(code) or TEST_FLAG.search(code):
        return "checks whether it runs under go test"
    if FORGED_REPORT.search(code):
        return "prints what reads as go test's results"
    if package != "main" and PROCESS_END.search(code):
        return "ends the process or takes its output from a package other than main"
    if CALLER.search(code):
        return "looks at who calls it"
    if HOME_READ.search(code):
        return "reads the home folder"
    return None


def _test_concern(line: str) -> str | None:
    """What an added line of a test file does that only a forged run needs:
    print go test's own result lines, or end the binary so that go counts
    no failure."""
    code = without_comment(line, "//")
    if LINKNAME.match(line):
        return "links to another package's private symbols"
    if TEST_FORGED_REPORT.search(code):
        return "prints what reads as go test's results"
    if TEST_PROCESS_END.search(code):
        return "ends the test binary or takes its output"
    return None


def _package(text: str) -> str:
    match = PACKAGE.search(text)
    return match.group(1) if match else ""
