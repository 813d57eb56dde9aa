"""Which test runs each changed line: python's plugin measured
in a real pytest, its report read back as hostile input, the changed
statements found from the diff, and `covered` judged from both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.diff.changed_code import ChangedCode, changed_code, ranges
from gatetui.gate.phases.coverage import NOT_HERE, NOTHING, WAITING, judge_covered, merged
from gatetui.git.changes import FileChange
from gatetui.git.snapshot import Snapshot
from gatetui.stacks.base import ReportProblem
from gatetui.stacks.python.coverage_lines import FORMAT, PYTHON_COVERAGE, read_coverage, statements
from gatetui.stacks.registry import load_judge, load_profile
from tests.support.coverage import plan_answers
from tests.support.repos import MakeRepo

CORE = "".join(f"line{n} = {n}\n" for n in range(1, 10))  # a statement on each line: each its own first
WANTED = {"pkg/core.py": CORE}


def report(**fields: object) -> bytes:
    return json.dumps({"format": FORMAT, **fields}).encode()


def test_the_report_gives_each_line_its_tests_and_drops_the_import_context() -> None:
    raw = report(
        contexts=["", "tests/test_a.py::test_one", "tests/test_a.py::test_two"],
        files={"pkg/core.py": {"1": [0], "3": [1, 2], "4": [2]}, "pkg/other.py": {"9": [1]}},
    )
    assert dict(read_coverage(raw, WANTED)) == {
        ("pkg/core.py", 1): frozenset(),
        ("pkg/core.py", 3): frozenset({"tests/test_a.py::test_one", "tests/test_a.py::test_two"}),
        ("pkg/core.py", 4): frozenset({"tests/test_a.py::test_two"}),
    }


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"\xff\xfe", "not JSON"),
        (b"[1, 2]", "not the gate's"),
        (json.dumps({"format": "other"}).encode(), "not the gate's"),
        (report(problem="another coverage\nmeasurement"), "another coverage measurement"),
        (report(contexts="x", files={}), "contexts are not a list"),
        (report(contexts=["a"], files=[]), "no files table"),
        (report(contexts=["a"], files={"pkg/core.py": {"0": [0]}}), "not a line number"),
        (report(contexts=["a"], files={"pkg/core.py": {"1": [1]}}), "not context numbers"),
        (report(contexts=["a"], files={"pkg/core.py": {"1": [True]}}), "not context numbers"),
        (b"[" * 100_000, "not JSON"),
    ],
)
def test_a_malformed_report_is_one_line_naming_what_is_wrong(raw: bytes, words: str) -> None:
    with pytest.raises(ReportProblem) as caught:
        read_coverage(raw, WANTED)
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=400),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=8),
            lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
            max_leaves=20,
        ).map(lambda tree: json.dumps({"format": FORMAT, "contexts": ["", "t"], "files": tree}).encode()),
    )
)
def test_any_bytes_read_as_lines_or_as_one_problem(raw: bytes) -> None:
    try:
        found = read_coverage(raw, {**WANTED, "": CORE})
    except ReportProblem as err:
        assert "\n" not in str(err)
        return
    for (path, line), tests in found.items():
        assert path in WANTED | {""} and line > 0 and tests <= {"t"}


SOURCE = '''"""A module."""

# a comment
def leap(year):
    """Whether a year is a leap year."""
    total = (year %
             4)
    if total == 0 and not (year % 100 == 0
                           and year % 400 != 0):
        return True

    return False
'''


def test_statements_are_first_lines_without_blanks_comments_or_docstrings() -> None:
    assert statements(SOURCE, frozenset(range(1, 14))) == {4, 6, 8, 10, 12}
    assert statements(SOURCE, frozenset({7, 9})) == {6, 8}  # inside a statement: its first line
    assert statements("def broken(:\n", frozenset({1})) == frozenset()


def test_changed_code_is_the_library_statements_head_adds_or_changes() -> None:
    base = SOURCE.replace("year % 400 != 0", "True")
    base_files = {"pyproject.toml": '[project]\nname = "p"\n', "tests/test_leap.py": "def test_x():\n    pass\n"}
    profile = load_profile(Snapshot.of_files({**base_files, "pkg/core.py": base}))
    changes = [
        FileChange("modify", "pkg/core.py", "pkg/core.py", base.encode(), SOURCE.encode()),
        FileChange("add", None, "pkg/new.py", None, b"# only a comment\nX = 1\n"),
        FileChange("modify", "tests/test_leap.py", "tests/test_leap.py", b"", b"def test_y():\n    pass\n"),
        FileChange("delete", "pkg/gone.py", None, b"X = 1\n", None),
    ]
    assert PYTHON_COVERAGE is profile.lines.coverage
    head = Snapshot.of_files({**base_files, "pkg/core.py": SOURCE, "pkg/new.py": "X = 1\n"})
    found = changed_code(changes, profile, load_judge(head).policy.sealed, PYTHON_COVERAGE, head)
    assert dict(found.lines) == {"pkg/core.py": frozenset({8}), "pkg/new.py": frozenset({2})}
    assert found.pairs() == [("pkg/core.py", 8), ("pkg/new.py", 2)]


def test_ranges_join_neighbouring_lines() -> None:
    assert ranges([20, 12, 13, 14, 3]) == ["3", "12-14", "20"]


CHANGED = ChangedCode({"pkg/core.py": frozenset({4, 6, 7, 12})}, {"pkg/core.py": SOURCE})


def test_covered_names_the_lines_no_test_runs_as_ranges() -> None:
    reached = {("pkg/core.py", 4): frozenset(), ("pkg/core.py", 12): frozenset({"t::a"})}
    result = judge_covered(CHANGED, reached, "")
    assert result.status is Status.REVIEW
    assert result.detail.splitlines()[0] == (
        "2 of 4 changed lines run under no test: pkg/core.py:6-7, 1 only at import or collection (bites judges them)"
    )
    assert result.detail.splitlines()[1:] == ["pkg/core.py:6: total = (year %", "pkg/core.py:7: 4)"]


def test_a_line_run_only_at_import_is_counted_apart_never_as_run_under_the_tests() -> None:
    some = {
        ("pkg/core.py", 4): frozenset(),
        ("pkg/core.py", 6): frozenset(),
        ("pkg/core.py", 7): frozenset({"t::a"}),
        ("pkg/core.py", 12): frozenset({"t::b"}),
    }
    assert judge_covered(CHANGED, some, "") == CheckResult(
        CheckId.COVERED,
        Status.PASS,
        ("all 4 changed lines run, 2 under 2 tests, 2 only at import or collection (bites judges them)"),
    )
    none = {("pkg/core.py", n): frozenset() for n in (4, 6, 7, 12)}
    assert judge_covered(CHANGED, none, "") == CheckResult(
        CheckId.COVERED, Status.PASS, ("all 4 changed lines run, 4 only at import or collection (bites judges them)")
    )


def test_covered_passes_when_every_changed_line_ran_and_asks_when_unmeasured() -> None:
    reached = {("pkg/core.py", n): frozenset({"t::a", f"t::{n}"}) for n in (4, 6, 7, 12)}
    assert judge_covered(CHANGED, reached, "") == CheckResult(
        CheckId.COVERED, Status.PASS, "all 4 changed lines run, under 5 tests"
    )
    assert judge_covered(CHANGED, None, "run 2 wrote no coverage report") == CheckResult(
        CheckId.COVERED, Status.REVIEW, "coverage not measured: run 2 wrote no coverage report"
    )


LIBRARY = "def leap(year):\n    if year % 400 == 0:\n        return True\n    return year % 4 == 0\n"
TESTS = (
    "from pkg.core import leap\n\n\ndef test_four():\n    assert leap(2024)\n\n\n"
    "class TestCentury:\n    def test_2000(self):\n        assert leap(2000)\n"
)


def leap_project(root: Path) -> Path:
    """The leap-year library and its tests, written in `root`."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text(LIBRARY)
    (root / "tests").mkdir()
    (root / "tests" / "test_core.py").write_text(TESTS)
    return root


def run_measured(root: Path, files: list[str], extra: str = "", limit: float = 120) -> dict[str, bytes]:
    """The coverage reports of pytest run on `root` with the gate's plugin
    measuring `files`; `limit` (seconds) only stops a probe that hangs."""
    gate = root / "gate"
    for name, data in PYTHON_COVERAGE.plugin.files.items():
        (gate / name).parent.mkdir(parents=True, exist_ok=True)
        (gate / name).write_bytes(data)
    out = root / "coverage.json"
    env = {**os.environ, **PYTHON_COVERAGE.plugin.env_for(str(gate), report=str(out), files=json.dumps(files))}
    env["PYTEST_ADDOPTS"] += f" -p no:randomly -p no:cacheprovider {extra}"
    env["PYTHONPATH"] = f"{gate}{os.pathsep}{root}"
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # as in the gate's runs: only the plugins named load
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "tests"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=limit,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return {p.name: p.read_bytes() for p in root.glob("coverage.json*")}


@pytest.mark.drives
def test_the_plugin_measures_each_line_by_the_test_node_ids(tmp_path: Path) -> None:
    raw = run_measured(leap_project(tmp_path), ["pkg/core.py"])["coverage.json"]
    four, century = "tests/test_core.py::test_four", "tests/test_core.py::TestCentury::test_2000"
    assert dict(read_coverage(raw, {"pkg/core.py": LIBRARY})) == {
        ("pkg/core.py", 1): frozenset(),
        ("pkg/core.py", 2): frozenset({four, century}),
        ("pkg/core.py", 3): frozenset({century}),
        ("pkg/core.py", 4): frozenset({four}),
    }
    assert json.loads(raw)["files"].keys() == {"pkg/core.py"}  # only the files asked are measured


def test_the_policy_carries_the_cap_and_the_profile_the_capability_only_where_the_stack_has_it() -> None:
    tests = {"tests/test_x.py": "def test_x():\n    pass\n"}
    judged = load_judge(Snapshot.of_files({**tests, "pyproject.toml": "[tool.gatetui]\nmutant_cap = 7\n"}))
    python = judged.profile
    node = load_profile(
        Snapshot.of_files(
            {
                "package.json": '{"scripts": {"test": "node --test"}}',
                "test/x.test.js": "require('node:test')('x', () => {});\n",
            }
        )
    )
    custom = load_profile(Snapshot.of_files({**tests, "pyproject.toml": '[tool.gatetui]\ntest = "make check"\n'}))
    assert (judged.policy.mutant_cap, python.lines.coverage is PYTHON_COVERAGE) == (7, True)
    assert (node.lines.coverage, node.lines.mutate, custom.lines.coverage) == (None, None, None)


PROJECT = {
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
    "pkg/__init__.py": "",
    "pkg/core.py": LIBRARY,
    "tests/test_core.py": TESTS,
}


def test_with_the_plan_a_change_to_tests_alone_skips_both(make_repo: MakeRepo) -> None:
    repo = make_repo(
        PROJECT,
        {
            "tests/test_core.py": TESTS + "\n\ndef test_more():\n    pass\n",
            "pkg/core.py": "# a comment\n" + LIBRARY.replace("\n", "\n\n", 1),
        },
    )
    assert plan_answers(repo) == [
        CheckResult(CheckId.COVERED, Status.SKIPPED, NOTHING),
        CheckResult(CheckId.BITES, Status.SKIPPED, NOTHING),
    ]


def test_with_the_plan_a_library_change_waits(make_repo: MakeRepo) -> None:
    assert plan_answers(make_repo(PROJECT, {"pkg/core.py": LIBRARY.replace("400", "4000")})) == [WAITING, WAITING]


def test_with_the_plan_node_says_it_cannot(make_repo: MakeRepo) -> None:
    node = {
        "package.json": '{"name": "n", "version": "0.0.0", "scripts": {"test": "node --test"}}\n',
        "src/n.js": "exports.n = () => 1;\n",
        "test/n.test.js": "require('node:test')('n', () => {});\n",
    }
    repo = make_repo(node, {"src/n.js": "exports.n = () => 2;\n"})
    assert plan_answers(repo) == [
        CheckResult(CheckId.COVERED, Status.SKIPPED, NOT_HERE),
        CheckResult(CheckId.BITES, Status.SKIPPED, NOT_HERE),
    ]


@pytest.mark.drives
def test_xdist_workers_each_write_their_share_and_the_gate_merges_them(tmp_path: Path) -> None:
    """The workers' shares merge into what one process measures. That run is
    also the yardstick for the workers' hang guard: three processes starting
    under whatever load the machine has now take a multiple of one's time,
    never a fixed number of seconds."""
    started = time.monotonic()
    alone = run_measured(leap_project(tmp_path / "alone"), ["pkg/core.py"])["coverage.json"]
    one_process = time.monotonic() - started
    reports = run_measured(leap_project(tmp_path / "xdist"), ["pkg/core.py"], "-p xdist -n 2", 60 + 20 * one_process)
    assert sorted(reports) == ["coverage.json", "coverage.json.gw0", "coverage.json.gw1"]
    parts = [read_coverage(reports[name], {"pkg/core.py": LIBRARY}) for name in sorted(reports)]
    four, century = "tests/test_core.py::test_four", "tests/test_core.py::TestCentury::test_2000"
    assert dict(merged(parts))[("pkg/core.py", 2)] == frozenset({four, century})
    assert dict(merged(parts)) == dict(read_coverage(alone, {"pkg/core.py": LIBRARY}))
    assert dict(parts[0]) == {}  # the controller runs no test


# False reviews seen on real releases: lines under `if TYPE_CHECKING:` never run
# (humanize 4.11, itsdangerous 2.2), and python reports no line of its own
# for the `if (` that opens a condition over several lines (idna 3.10).
GUARDED = """from __future__ import annotations

import typing as t
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

if t.TYPE_CHECKING:
    Label = str
else:
    Label = object
LIMIT = 63


def valid(label: str) -> bool:
    size = len(label)
    if (  # CPython 3.11 gives this line no line event: the condition's first instruction is on the next
        0 < size <= LIMIT
        and label.isascii()
    ):
        return True
    return False


def unused() -> int:
    return 2
"""
GUARDED_TESTS = "from pkg.core import valid\n\n\ndef test_valid():\n    assert valid('a')\n"


@pytest.mark.drives
def test_under_real_coverage_only_the_lines_no_test_runs_are_named(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "core.py").write_text(GUARDED)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_core.py").write_text(GUARDED_TESTS)
    changed = ChangedCode({"pkg/core.py": statements(GUARDED, frozenset(range(1, 28)))}, {"pkg/core.py": GUARDED})
    assert changed.lines["pkg/core.py"] == {1, 3, 4, 12, 13, 16, 17, 18, 22, 23, 26, 27}  # none of the guarded blocks
    reached = read_coverage(run_measured(tmp_path, ["pkg/core.py"])["coverage.json"], changed.texts)
    test = "tests/test_core.py::test_valid"
    assert (reached[("pkg/core.py", 18)], reached[("pkg/core.py", 13)]) == (frozenset({test}), frozenset())
    assert judge_covered(changed, reached, "").detail.splitlines() == [  # LIMIT = 63, the imports, the defs
        "2 of 12 changed lines run under no test: pkg/core.py:23, pkg/core.py:27, "
        "7 only at import or collection (bites judges them)",
        "pkg/core.py:23: return False",
        "pkg/core.py:27: return 2",
    ]
    assert [line for path, line in changed.pairs() if reached.get((path, line)) == frozenset()] == [
        1,
        3,
        4,
        12,
        13,
        16,
        26,
    ]


def test_the_lines_of_a_condition_count_as_the_if_that_opens_it() -> None:
    raw = report(contexts=["", "t::a", "t::b"], files={"pkg/core.py": {"19": [1], "20": [2], "22": [1]}})
    assert dict(read_coverage(raw, {"pkg/core.py": GUARDED})) == {
        ("pkg/core.py", 18): frozenset({"t::a", "t::b"}),
        ("pkg/core.py", 22): frozenset({"t::a"}),
    }


VERSION_FILE = """# file generated by setuptools-scm
# don't change, don't track in version control
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Tuple, Union
    VERSION_TUPLE = Tuple[Union[int, str], ...]
else:
    VERSION_TUPLE = object

version: str
__version__ = version = '4.11.0'
"""


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (VERSION_FILE, {3, 8, 10, 11}),  # hatch-vcs's version file: its flag is the literal False
        (VERSION_FILE.replace("TYPE_CHECKING = False", "TYPE_CHECKING = True"), {3, 4, 5, 6, 8, 10, 11}),
        (
            VERSION_FILE.replace("TYPE_CHECKING = False", "from typing import TYPE_CHECKING\nTYPE_CHECKING = 1"),
            {3, 4, 5, 6, 7, 9, 11, 12},
        ),
        (VERSION_FILE.replace("TYPE_CHECKING = False", "from typing import *"), {3, 4, 5, 6, 8, 10, 11}),
        (
            VERSION_FILE.replace("TYPE_CHECKING = False", "from flags import *\nTYPE_CHECKING = False"),
            {3, 4, 5, 6, 7, 9, 11, 12},
        ),  # a star import may bring any flag
        (
            VERSION_FILE.replace(
                "TYPE_CHECKING = False", "import typing\ntyping.TYPE_CHECKING = True\nTYPE_CHECKING = False"
            ),
            {3, 4, 5, 6, 7, 8, 10, 12, 13},
        ),
        (
            'import typing as t\nX = t.f("""\nif t.TYPE_CHECKING:\n""")\nif t.TYPE_CHECKING:\n    import os\n',
            {1, 2, 5, 6},
        ),
    ],
)
def test_only_a_flag_that_is_false_at_run_time_leaves_its_block_out(source: str, expected: set[int]) -> None:
    assert statements(source, frozenset(range(1, 20))) == expected
