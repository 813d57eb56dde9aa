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
    r"|(?:vitest|--test\b|node:test|jest).*\bprocess\.(?:argv|execArgv)\b")
# An environment read with a test word on the line ("test", "Test", "TEST", never "latest").
ENV_READ = re.compile(r"\b(?:process\.env|import\.meta\.env)\b")
TEST_WORD = re.compile(r"(?<![A-Za-z])(?:[tT]est|TEST)")
WHOLE_ENVIRONMENT = re.compile(
    r"\bObject\.(?:keys|values|entries|getOwnPropertyNames)\s*\(\s*process\.env\s*\)"
    r"|\bfor\s*\(\s*(?:const|let|var)?\s*\w+\s+in\s+process\.env\b")
DYNAMIC_CODE = re.compile(
    r"(?<![\w.$])eval\s*\(|\bnew\s+Function\s*\(|\bvm\.\w+\s*\(|[\"'](?:node:)?vm[\"']"
    r"|(?<![\w.$])(?:require|import)\s*\((?!\s*[\"'][^\"'`]*[\"']\s*\))")
# a value compared with "test" (NODE_ENV read once, then compared elsewhere)
TEST_COMPARED = re.compile(r"[=!]==?\s*[\"'`][tT]est(?:ing)?[\"'`]|[\"'`][tT]est(?:ing)?[\"'`]\s*[=!]==?")
PROCESS_END = re.compile(
    r"\bprocess\.(?:exit|reallyExit|abort|kill|exitCode|binding|_rawDebug)\b|\bprocess\s*\[|\bReflect\.\w+\(\s*process\b"
    r"|\bprocess\.(?:on|once|prependListener|addListener)\s*\(\s*[\"'](?:exit|beforeExit|uncaughtException"
    r"|unhandledRejection)[\"']")
RUNNER_API = re.compile(
    r"[\"'](?:vitest|node:test|@vitest/[\w-]+)[\"']|\bvi\.(?:mock|doMock|hoisted|spyOn|stubGlobal|stubEnv)\b")
SANDBOX_PROBE = re.compile(
    r"/tmp/gatetui\b|\bGATETUI_\w+|\bgatetui-runs\b|['\"/]\.site-"
    r"|\bget(?:e)?uid\s*\(\s*\)\s*(?:[<>]=?|[=!]==?)\s*\d{5,}|\d{5,}\s*(?:[<>]=?|[=!]==?)\s*process\.gete?uid\b")


def scan_hooks(base: Snapshot, head: Snapshot, is_test_file: Callable[[str], bool]) -> HookScan:
    changed = [p for p in head.paths
               if JS.search(p) and not is_test_file(p) and "node_modules/" not in p
               and (p not in base or base.ident(p) != head.ident(p))]
    reaches = [Finding(f"{path}:{n}", f"{what}: {line.strip()[:80]}")
               for path in changed
               for n, line in added(base.text(path) or "", head.text(path) or "")
               if (what := _concern(without_comment(line, "//")))]
    return HookScan(reaches=tuple(reaches))


# The means a forgery needs when it names no runner, in the order they are said.
MEANS = ((WHOLE_ENVIRONMENT, "library code reads the whole environment"),
         (DYNAMIC_CODE, "library code runs code it builds at run time"),
         (PROCESS_END, "library code reaches into how the process ends"),
         (RUNNER_API, "library code uses the test runner's API"))


def _concern(code: str) -> str | None:
    if RUNNER_PROBE.search(code) or (ENV_READ.search(code) and TEST_WORD.search(code)) or TEST_COMPARED.search(code):
        return "library code checks whether a test runner is loaded"
    if SANDBOX_PROBE.search(code):
        return "library code looks for the gate's sandbox"
    return first_match(code, MEANS)
