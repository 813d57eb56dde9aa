"""Library code that asks whether vitest or `node --test` runs it, or
whether it runs in the gate.

Such code can be right only there: every run takes the path the tests see,
base's tests on head's code included, so no run can contradict it. The
lines head adds that ask (a runner's environment variable, its globals, its
flags in process.argv, the gate's names or a uid past the usual ranges) are
shown to a person (review), as python's and go's are.

`import.meta.vitest` is left alone: it is how vitest's in-source tests are
written, and a block under it defines tests rather than changing what the
library does.

A line that names no runner can still ask for one (`process.env.NODE_ENV
=== "test"`, which vitest sets; any environment variable with a test word),
or read every variable to find one; and a forgery needs means that library
code rarely has: code built at run time (`eval`, `new Function`, `vm`), a
hand on how the process ends (`process.exit`, `process.on("exit")`), the
test runner's own API (`vi.mock` in a setup file the library holds). Each
is shown to a person with its line.

So is what recognises a test run without naming it: the caller's stack
(`new Error().stack` holds node's `test_runner` or vitest's frames,
`Error.captureStackTrace`, `Error.prepareStackTrace`), and the home folder
(`os.homedir()`, `process.env.HOME`), empty in a sandbox. A test file head
adds or changes is read for the two halves of a forged report: text shaped
as a runner's report (TAP's `ok 1 - ...`, `# pass 4`, JUnit's `<testcase`)
and an end of the process the runner counts as no failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gatetui.git.snapshot import Snapshot
from gatetui.stacks.base import Finding, HookScan
from gatetui.stacks.lines import added, first_match, without_comment

JS = re.compile(r"\.(?:[cm]?js|jsx|[cm]?ts|tsx)$")
RUNNER_PROBE = re.compile(
    r"\b(?:VITEST\w*|NODE_TEST_CONTEXT|JEST_WORKER_ID|__vitest_\w+__)\b"
    r"|\btypeof\s+(?:describe|it|test|expect|vi|jest|beforeAll|afterAll)\b"
    r"|\bprocess\.(?:argv|execArgv)\b.*(?:vitest|--test\b|node:test|jest)"
    r"|(?:vitest|--test\b|node:test|jest).*\bprocess\.(?:argv|execArgv)\b"
)
# An environment read with a test word on the line ("test", "Test", "TEST", never "latest").
ENV_READ = re.compile(r"\b(?:process\.env|import\.meta\.env)\b")
TEST_WORD = re.compile(r"(?<![A-Za-z])(?:[tT]est|TEST)")
WHOLE_ENVIRONMENT = re.compile(
    r"\bObject\.(?:keys|values|entries|getOwnPropertyNames)\s*\(\s*process\.env\s*\)"
    r"|\bfor\s*\(\s*(?:const|let|var)?\s*\w+\s+in\s+process\.env\b"
)
DYNAMIC_CODE = re.compile(
    r"(?<![\w.$])eval\s*\(|\bnew\s+Function\s*\(|\bvm\.\w+\s*\(|[\"'](?:node:)?vm[\"']"
    r"|(?<![\w.$])(?:require|import)\s*\((?!\s*[\"'][^\"'`]*[\"']\s*\))"
)
# a value compared with "test" (NODE_ENV read once, then compared elsewhere)
TEST_COMPARED = re.compile(r"[=!]==?\s*[\"'`][tT]est(?:ing)?[\"'`]|[\"'`][tT]est(?:ing)?[\"'`]\s*[=!]==?")
PROCESS_END = re.compile(
    r"\bprocess\.(?:exit|reallyExit|abort|kill|exitCode|binding|_rawDebug)\b|\bprocess\s*\[|\bReflect\.\w+\(\s*process\b"
    r"|\bprocess\.(?:on|once|prependListener|addListener)\s*\(\s*[\"'](?:exit|beforeExit|uncaughtException"
    r"|unhandledRejection)[\"']"
)
RUNNER_API = re.compile(
    r"[\"'](?:vitest|node:test|@vitest/[\w-]+)[\"']|\bvi\.(?:mock|doMock|hoisted|spyOn|stubGlobal|stubEnv)\b"
)
CALLER = re.compile(
    # an error class's own `Error.captureStackTrace(this, ...)` is how custom errors are written
    r"\bnew\s+[\w$.]+\s*\([^()]*\)\s*\.stack\b|\bError\.captureStackTrace\b(?!\s*\(\s*this\b)"
    r"|\bError\.(?:prepareStackTrace|stackTraceLimit)\b"
    r"|=\s*new\s+Error\s*\(\s*\)\s*;?\s*$|\barguments\.callee\b"  # an error made only for its stack
    r"|\.(?:getFileName|getFunctionName|getTypeName|getScriptNameOrSourceURL)\s*\("
)
HOME_READ = re.compile(
    r"\bhomedir\s*\(|\buserInfo\s*\(|\bprocess\.env\s*(?:\.\s*(?:HOME|USERPROFILE)\b|\[\s*[\"'`](?:HOME|USERPROFILE)[\"'`])"
    r"|\{[^}]*\b(?:HOME|USERPROFILE)\b[^}]*\}\s*=\s*process\.env\b"
)
# In a test file: text shaped as TAP's or JUnit's report, and the process ended from a test.
TEST_FORGED_REPORT = re.compile(
    r"[\"'`]\s*(?:not\s+)?ok\s+(?:\d|\$\{|[\"'`]\s*\+)"
    r"|(?:[\"'`]|\\n)\s*#\s*(?:pass|fail|tests|cancelled|skipped|todo)\s+(?:\d|\$\{|[\"'`]\s*\+)"
    r"|(?:[\"'`]|\\n)\s*1\.\.(?:\d|\$\{|[\"'`]\s*\+)|<\s*test(?:case|suites?)\b"
)
TEST_PROCESS_END = re.compile(
    r"\bprocess\.(?:exit|reallyExit|abort|exitCode|_exiting)\b|\bprocess\.kill\s*\(\s*process\.pid\b"
    r"|\bprocess\s*\[|\bReflect\.\w+\(\s*process\b"
)
SANDBOX_PROBE = re.compile(
    r"/tmp/gatetui\b|\bGATETUI_\w+|\bgatetui-runs\b|['\"/]\.site-"
    r"|\bget(?:e)?uid\s*\(\s*\)\s*(?:[<>]=?|[=!]==?)\s*\d{5,}|\d{5,}\s*(?:[<>]=?|[=!]==?)\s*process\.gete?uid\b"
)


def scan_hooks(base: Snapshot, head: Snapshot, is_test_file: Callable[[str], bool]) -> HookScan:
    changed = [
        p
        for p in head.paths
        if JS.search(p) and "node_modules/" not in p and (p not in base or base.ident(p) != head.ident(p))
    ]
    reaches = [
        Finding(f"{path}:{n}", f"{what}: {line.strip()[:80]}")
        for path in changed
        for n, line in added(base.text(path) or "", head.text(path) or "")
        if (what := (_test_concern if is_test_file(path) else _concern)(without_comment(line, "//")))
    ]
    return HookScan(reaches=tuple(reaches))


# The means a forgery needs when it names no runner, in the order they are said.
MEANS = (
    (WHOLE_ENVIRONMENT, "library code reads the whole environment"),
    (DYNAMIC_CODE, "library code runs code it builds at run time"),
    (PROCESS_END, "library code reaches into how the process ends"),
    (RUNNER_API, "library code uses the test runner's API"),
    (CALLER, "library code looks at who calls it"),
    (HOME_READ, "library code reads the home folder"),
)
# What only a forged report needs of a test file.
TEST_MEANS = (
    (TEST_FORGED_REPORT, "test code prints what reads as the test runner's report"),
    (TEST_PROCESS_END, "test code ends the process"),
)


def _concern(code: str) -> str | None:
    if RUNNER_PROBE.search(code) or (ENV_READ.search(code) and TEST_WORD.search(code)) or TEST_COMPARED.search(code):
        return "library code checks whether a test runner is loaded"
    if SANDBOX_PROBE.search(code):
        return "library code looks for the gate's sandbox"
    return first_match(code, MEANS)


def _test_concern(code: str) -> str | None:
    return first_match(code, TEST_MEANS)
