"""Hidden tests: tests that live only in the supervisor's state directory.

They catch an implementation that special-cases the visible tests' inputs.
The caller (the CLI, the supervisor) reads the repository's hidden folder
and passes its files in the GateRequest, so the gate itself never touches
the state directory. The runner writes them into a copy of the installed
workspace, over base's sealed files (so head's conftest.py or pytest
settings cannot deselect them), and runs them there.

What the agent learns is a count: "2 of 5 hidden tests failed". Neither
names nor output reach a check's detail; the run's output goes out on the
"hidden" stream only, which a consumer the agent reads must drop.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.judging import hidden_time
from gatetui.gate.judging.results import SuiteRun
from gatetui.gate.reports import junit
from gatetui.stacks.registry import language_of

STREAM = "hidden"  # the only stream that carries the hidden run's output
SKIP_NAMES = frozenset({"__pycache__", ".pytest_cache", "node_modules"})
MAX_BYTES = 8 << 20  # all hidden files together: tests, not data sets


@dataclass(frozen=True)
class HiddenTests:
    """The configured hidden tests, at the paths they are written to."""

    files: Mapping[str, bytes]  # every file of the folder, relative to the tree's top
    test_files: tuple[str, ...]  # the ones the test command is pointed at
    digest: str  # sha256 over paths and bytes: which hidden set judged

    def definitions(self) -> list[tuple[str, str]]:
        """(file, test name) of every test the files define: the floor of
        what the run must report, so a deselected hidden test still counts."""
        found = []
        for path in self.test_files:
            language = language_of(path)
            source = self.files[path].decode("utf-8", "replace")
            found += [(path, d.name) for d in (language.test_defs(path, source) if language else [])]
        return found


def read_hidden(folder: Path) -> dict[str, bytes]:
    """Every regular file under `folder`, by path relative to it; {} when the
    folder does not exist. Symlinks are not followed: the folder is the
    supervisor's, but a link could point anywhere."""
    if not folder.is_dir():
        return {}
    files: dict[str, bytes] = {}
    total = 0
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part in SKIP_NAMES for part in rel.parts) or path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        total += len(data)
        if total > MAX_BYTES:
            raise ValueError(f"hidden tests under {folder} exceed {MAX_BYTES >> 20} MiB")
        files[rel.as_posix()] = data
    return files


def select_hidden(
    given: Mapping[str, bytes] | None, folder: str, is_test_file: Callable[[str], bool], source: str = ""
) -> tuple[HiddenTests | None, str]:
    """The files under the configured folder, or why there are none.

    `given` holds the repository's whole hidden directory (None: the caller
    passed nothing); `folder` is the `hidden` setting, a folder inside it
    ("." for all of it); `source` is where the caller read them (the full
    path a person must fill, when empty)."""
    where = f"hidden = {folder!r} is configured, but"
    if given is None:
        return None, f"{where} no hidden tests were passed to the gate (run it with --state-dir)"
    prefix = "" if folder.strip("/") in ("", ".") else folder.strip("/") + "/"
    files = {path[len(prefix) :]: data for path, data in sorted(given.items()) if path.startswith(prefix)}
    tests = tuple(p for p in files if is_test_file(p) and not p.endswith("conftest.py"))
    if not tests:
        if not source:
            return None, (
                f"{where} the state directory holds no hidden test file under "
                f"hidden/{prefix or ''}: add the tests there or remove the setting"
            )
        full = f"{source.rstrip('/')}/{prefix}"
        return None, (
            f"{where} no hidden test file is in {full}: add the tests there "
            f"(mkdir -p {shlex.quote(full)}) or remove the setting"
        )
    digest = hashlib.sha256()
    for path, data in files.items():
        digest.update(f"{path}\0{len(data)}\0".encode() + data)
    return HiddenTests(files, tests, digest.hexdigest()), ""


def hidden_command(test: str, tests: HiddenTests) -> str:
    """The profile's test command pointed at the hidden test files only."""
    return f"{test} {shlex.join(tests.test_files)}"


def judge_hidden(run: SuiteRun, tests: HiddenTests, limit: float | None = None) -> CheckResult:
    """Pass when every hidden test passed; say only how many did not.

    A hidden test the run did not report (deselected, never collected)
    counts as failed. A file that failed to load counts through the tests
    it defines. A run past `limit` (hidden_time.py) fails in words that
    say nothing of its time."""
    if limit is not None and hidden_time.over(run.result, limit):
        return CheckResult(CheckId.HIDDEN, Status.FAIL, hidden_time.NOT_PASSED)
    if run.result.timed_out:
        return CheckResult(CheckId.HIDDEN, Status.FAIL, f"the hidden run {run.result.describe_end()}")
    if run.report is None:
        return CheckResult(
            CheckId.HIDDEN, Status.FAIL, f"the hidden run wrote no readable report ({run.result.describe_end()})"
        )
    outcomes = _outcomes(run.report, tests)
    total, failed = len(outcomes), sum(not ok for ok in outcomes.values())
    if total == 0:
        return CheckResult(CheckId.HIDDEN, Status.FAIL, "no hidden test ran")
    if failed:
        return CheckResult(CheckId.HIDDEN, Status.FAIL, f"{failed} of {total} hidden tests failed")
    if not run.result.ok:
        return CheckResult(
            CheckId.HIDDEN,
            Status.FAIL,
            f"all {total} hidden tests passed, yet the run ended with {run.result.describe_end()}",
        )
    return CheckResult(CheckId.HIDDEN, Status.PASS, f"{total} of {total} hidden tests passed")


def _outcomes(report: junit.Report, tests: HiddenTests) -> dict[str, bool]:
    """Hidden test id (or file::name for one never reported) -> passed.

    A testcase whose runner names no file (node before 24 writes only the
    title) still belongs to the hidden run: its command named the hidden
    files alone, so it is counted, and matched to a definition by title."""
    defined = tests.definitions()
    with_defs = {path for path, _ in defined}
    outcomes: dict[str, bool] = {}
    for test_id, result in report.tests.items():
        path = test_id.split("::", 1)[0]
        if result.file is None and "::" not in test_id and test_id not in tests.test_files:
            path = ""  # no file said: a hidden file's test, by the command
        elif path not in tests.test_files or (test_id == path and path in with_defs):
            continue  # another file's test, or a file that failed to load (counted by its defs)
        outcomes[test_id] = result.outcome is junit.Outcome.PASSED
    for path, name in defined:
        if not any(_is_instance(test_id, path, name) for test_id in outcomes):
            outcomes[f"{path}::{name}"] = False
    return outcomes


def _is_instance(test_id: str, path: str, name: str) -> bool:
    """Whether a reported id is (a parametrization of) a defined test, with
    its file or, where the runner named none, by its title alone."""
    return any(test_id == prefix or test_id.startswith(prefix + "[") for prefix in (f"{path}::{name}", name))
