"""JS library code that is right only under the runner, or only in the gate,
is shown to a person; so is the same rule's shared comment cutter."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatetui.git.snapshot import Snapshot
from gatetui.stacks.lines import without_comment
from gatetui.stacks.node.hooks import scan_hooks

LIB = "export function median(values) {\n  return values[0];\n}\n"


def scan(line: str, path: str = "src/median.js") -> list[tuple[str, str]]:
    base = Snapshot.of_files({"package.json": "{}", path: LIB}, sha="a" * 40)
    head = Snapshot.of_files({"package.json": "{}", path: LIB.replace("{\n", "{\n" + line + "\n", 1)}, sha="b" * 40)
    found = scan_hooks(base, head, lambda p: ".test." in p or p.startswith("test/"))
    return [(f.path, f.what) for f in found.reaches]


RUNNER = "library code checks whether a test runner is loaded"
SANDBOX = "library code looks for the gate's sandbox"


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("  if (process.env.VITEST) return sorted(values);", RUNNER),
        ("  if (process.env['NODE_TEST_CONTEXT']) return sorted(values);", RUNNER),
        ("  const { VITEST_WORKER_ID } = process.env;", RUNNER),
        ('  if ("JEST_WORKER_ID" in process.env) return sorted(values);', RUNNER),
        ("  if (globalThis.__vitest_worker__) return sorted(values);", RUNNER),
        ("  if (typeof describe === 'function') return sorted(values);", RUNNER),
        ('  if (process.execArgv.includes("--test")) return sorted(values);', RUNNER),
        ('  if (process.argv.some((a) => a.includes("vitest"))) return sorted(values);', RUNNER),
        ('  const url = "http://x"; if (process.env.VITEST) return sorted(values);', RUNNER),
        ('  if (process.cwd().startsWith("/tmp/gatetui")) return sorted(values);', SANDBOX),
        ("  if (process.getuid() >= 420000) return sorted(values);", SANDBOX),
    ],
)
def test_library_code_asking_for_the_runner_or_the_gate_is_named(line: str, what: str) -> None:
    assert scan(line) == [("src/median.js:2", f"{what}: {line.strip()}")]


@pytest.mark.parametrize(
    "line",
    [
        "  // under vitest, process.env.VITEST is set",
        "  if (process.env.NODE_ENV === 'production') return values[1];",
        "  if (process.getuid() === 0) return values[1];",
        "  const argv = process.argv.slice(2);",
        "  if (import.meta.vitest) { /* in-source tests */ }",
    ],
)
def test_lookalikes_are_not_named(line: str) -> None:
    assert scan(line) == []


def test_runner_probes_in_test_files_and_other_languages_are_not_named() -> None:
    """A test may ask for its runner; a test file is read only for a forged
    report (test_forged_test_files.py)."""
    assert (
        scan("  if (process.env.VITEST) x();", "test/median.test.js"),
        scan("  if (process.env.VITEST) x();", "README.md"),
    ) == ([], [])


@given(st.text(alphabet=st.characters(blacklist_characters="#"), max_size=60))
def test_a_line_without_the_marker_is_kept_whole(line: str) -> None:
    assert without_comment(line, "#") == line


@given(st.text(max_size=60), st.text(max_size=20))
def test_the_cut_is_a_prefix_that_ends_before_a_marker(code: str, comment: str) -> None:
    cut = without_comment(code + comment, "#")
    assert (code + comment).startswith(cut)
    assert cut == code + comment or (code + comment)[len(cut)] == "#"


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("x = 1  # a comment", "x = 1  "),
        ('url = "http://a"; probe()  // note', 'url = "http://a"; probe()  '),
        ("s = 'it''s' # c", "s = 'it''s' "),
        (r'x = "a\"#b" # c', r'x = "a\"#b" '),
    ],
)
def test_a_marker_inside_a_string_does_not_cut(line: str, code: str) -> None:
    marker = "//" if "//" in line.split(";")[-1] else "#"
    assert without_comment(line, marker) == code
