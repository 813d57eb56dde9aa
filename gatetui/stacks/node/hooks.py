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
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gatetui.git.snapshot import Snapshot
from gatetui.stacks.base import Finding, HookScan
from gatetui.stacks.lines import added, without_comment

JS = re.compile(r"\.(?:[cm]?js|jsx|[cm]?ts|tsx)$")
RUNNER_PROBE = re.compile(
    r"\b(?:VITEST\w*|NODE_TEST_CONTEXT|JEST_WORKER_ID|__vitest_\w+__)\b"
    r"|\btypeof\s+(?:describe|it|test|expect|vi|jest|beforeAll|afterAll)\b"
    r"|\bprocess\.(?:argv|execArgv)\b.*(?:vitest|--test\b|node:test|jest)"
    r"|(?:vitest|--test\b|node:test|jest).*\bprocess\.(?:argv|execArgv)\b")
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


def _concern(code: str) -> str | None:
    if RUNNER_PROBE.search(code):
        return "library code checks whether a test runner is loaded"
    if SANDBOX_PROBE.search(code):
        return "library code looks for the gate's sandbox"
    return None
