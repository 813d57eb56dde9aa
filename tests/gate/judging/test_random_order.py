"""The random-order run: the plugin shuffles by its seed alone, the plan
records the seed, and the runs' detail names it when that run differs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gatetui.backends.base import CommandResult
from gatetui.gate.judging.results import SuiteRun, judge_runs
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.reports.junit import Outcome, Report, TestResult
from gatetui.stacks.node.profile import REVERSE as NODE_REVERSE
from gatetui.stacks.python.profile import REVERSE, SHUFFLE
from tests.support.repos import MakeRepo

NAMES = [f"t{i}" for i in range(8)]
FOLDER = ".gatetui-plugins"  # the gate draws one per run


def pytest_order(tmp_path: Path, seed: str | None, reverse: bool = False) -> list[str]:
    """The order a real pytest process ran two files' tests in, with the
    plugin loaded the way the runner loads it (PYTHONPATH and -p)."""
    project = tmp_path / "project"
    if not project.exists():
        (project / "tests").mkdir(parents=True)
        for module in ("a", "b"):
            body = "".join(f"def test_{module}{n}(record):\n    record('{module}{n}')\n\n\n" for n in NAMES)
            (project / "tests" / f"test_{module}.py").write_text(body)
        (project / "tests" / "conftest.py").write_text(
            "import os\nimport pytest\n\n\n@pytest.fixture\ndef record():\n"
            "    return lambda name: open(os.environ['ORDER_FILE'], 'a').write(name + '\\n')\n"
        )
        for rel, data in {**SHUFFLE.files, **REVERSE.plugin.files}.items():
            (project / FOLDER / rel).parent.mkdir(parents=True, exist_ok=True)
            (project / FOLDER / rel).write_bytes(data)
    order_file = tmp_path / f"order-{len(list(tmp_path.glob('order-*')))}"  # one file per process
    # as in the gate's runs, only the plugins named load (never this suite's own)
    env = {**os.environ, "ORDER_FILE": str(order_file), "PYTEST_ADDOPTS": "", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    if seed is not None:
        env.update(SHUFFLE.env_for(str(project / FOLDER), seed=int(seed)))
    if reverse:
        env.update(REVERSE.plugin.env_for(str(project / FOLDER)))
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "tests"]
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return order_file.read_text().split()


@pytest.mark.drives
def test_the_seed_alone_decides_the_order(tmp_path: Path) -> None:
    file_order = [f"{m}{n}" for m in "ab" for n in NAMES]
    assert pytest_order(tmp_path, None) == file_order
    first = pytest_order(tmp_path, "7")
    assert first == pytest_order(tmp_path, "7")  # replayable: same seed, same order
    assert sorted(first) == sorted(file_order) and first != file_order
    assert pytest_order(tmp_path, "8") != first
    # shuffled by file: each file's tests stay together (module fixtures set up once)
    assert [name[0] for name in first] in (["a"] * 8 + ["b"] * 8, ["b"] * 8 + ["a"] * 8)


def test_plugin_imports_nothing_from_gatetui() -> None:
    source = SHUFFLE.files["gatetui_random_order.py"].decode()
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert imports == ["from __future__ import annotations", "import os", "import random", "import pytest"]


PROJECT = {
    "pyproject.toml": '[project]\nname = "p"\nversion = "0"\n\n[tool.gatetui]\nrandom_order = true\n',
    "p/__init__.py": "",
    "tests/test_p.py": "def test_p():\n    pass\n",
}


def test_plan_records_the_seed_given_or_drawn(make_repo: MakeRepo) -> None:
    repo = make_repo(PROJECT, {"p/__init__.py": "X = 1\n"})
    given = make_plan(GateRequest(repo, "main", "agent/x", random_seed=42)).digests
    assert (given.random_seed, given.to_json()["random_seed"]) == (42, 42)
    drawn = make_plan(GateRequest(repo, "main", "agent/x")).digests.random_seed
    assert isinstance(drawn, int) and 0 <= drawn < 2**31


def test_random_order_off_records_no_seed(make_repo: MakeRepo) -> None:
    plain = dict(PROJECT, **{"pyproject.toml": '[project]\nname = "p"\nversion = "0"\n'})
    repo = make_repo(plain, {"p/__init__.py": "X = 1\n"})
    digests = make_plan(GateRequest(repo, "main", "agent/x", random_seed=42)).digests
    assert digests.random_seed is None
    assert "random_seed" not in digests.to_json()


OK = CommandResult(exit_code=0, wall_seconds=1.0)
FAILED = CommandResult(exit_code=1, wall_seconds=1.0)


def report(**outcomes: Outcome) -> Report:
    return Report.from_results(TestResult(f"t.py::{k}", v) for k, v in outcomes.items())


def test_runs_detail_names_the_seed_when_the_shuffled_run_differs() -> None:
    P, F = Outcome.PASSED, Outcome.FAILED
    straight = [SuiteRun(f"run {i}", OK, report(a=P, b=P)) for i in (1, 2)]
    shuffled = SuiteRun("run 3", FAILED, report(a=P, b=F), seed=99)
    assert judge_runs([*straight, shuffled]).detail == (
        "2 of 3 passed: order-dependent t.py::b (passes only after a); run 3 (random order, seed 99): t.py::b failed"
    )
    # the shuffled run passing where the others failed is worth its seed too
    broken = [SuiteRun(f"run {i}", FAILED, report(a=P, b=F)) for i in (1, 2)]
    passed = SuiteRun("run 3", OK, report(a=P, b=P), seed=99)
    assert judge_runs([*broken, passed]).detail == (
        "1 of 3 passed: flaky t.py::b; run 1: t.py::b failed; run 3 ran in random order (seed 99)"
    )
    assert judge_runs([*straight, SuiteRun("run 3", OK, report(a=P, b=P), seed=99)]).detail == "3 of 3 runs passed"


@pytest.mark.drives
def test_the_reverse_plugin_runs_every_test_last_to_first(tmp_path: Path) -> None:
    """Each test runs before every test declared before it: one run breaks
    every test that needs an earlier one to have run."""
    file_order = [f"{m}{n}" for m in "ab" for n in NAMES]
    assert pytest_order(tmp_path, None, reverse=True) == file_order[::-1]
    assert REVERSE.label == "reverse order"
    source = REVERSE.plugin.files["gatetui_reverse_order.py"].decode()
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert imports == ["from __future__ import annotations", "import pytest"]


def test_a_test_failing_only_out_of_source_order_is_order_dependent() -> None:
    P, F = Outcome.PASSED, Outcome.FAILED
    reversed_run = SuiteRun("run 1", FAILED, report(a=F, b=F, c=P), order="reverse order")
    plain = SuiteRun("run 2", OK, report(a=P, b=P, c=P))
    shuffled = SuiteRun("run 3", OK, report(a=P, b=P, c=P), seed=5)
    assert judge_runs([reversed_run, plain, shuffled]).detail == (
        "2 of 3 passed: order-dependent t.py::a, t.py::b (passes only after a); "
        "run 1 (reverse order): t.py::a, t.py::b failed; run 3 ran in random order (seed 5)"
    )
    # failing in a source-order run too: flaky, not order-dependent
    flaky = SuiteRun("run 2", FAILED, report(a=P, b=F, c=P))
    assert judge_runs([reversed_run, flaky, shuffled]).detail == (
        "1 of 3 passed: order-dependent t.py::a; flaky t.py::b; run 1 (reverse order): t.py::a, t.py::b failed; "
        "run 3 ran in random order (seed 5)"
    )


NODE_TESTS = """import { test, describe, it } from "node:test";
import { appendFileSync } from "node:fs";
const record = (name) => appendFileSync(process.env.ORDER_FILE, name + "\\n");
test("t1", () => record("t1"));
test.skip("t2", () => record("t2"));
describe("s", () => {
  it("s1", () => record("s1"));
  it("s2", () => record("s2"));
});
test("t3", async (t) => { record("t3"); await t.test("t3a", () => record("t3a")); });
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.drives
def test_the_node_preload_registers_each_files_tests_last_to_first(tmp_path: Path) -> None:
    """node --test with the reverse run's preload: top-level
    tests and each suite's tests reversed, subtests and skips kept."""
    (tmp_path / "package.json").write_text('{"type": "module"}\n')
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "a.test.js").write_text(NODE_TESTS)
    for rel, data in NODE_REVERSE.plugin.files.items():
        (tmp_path / FOLDER / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / FOLDER / rel).write_bytes(data)

    def order(reverse: bool) -> list[str]:
        out = tmp_path / f"order-{reverse}"
        env = {
            "PATH": os.environ["PATH"],
            "ORDER_FILE": str(out),
            **(NODE_REVERSE.plugin.env_for(str(tmp_path / FOLDER)) if reverse else {}),
        }
        done = subprocess.run(
            ["node", "--test", "test/"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return out.read_text().split()

    assert order(False) == ["t1", "s1", "s2", "t3", "t3a"]
    assert order(True) == ["t3", "t3a", "s2", "s1", "t1"]
    assert NODE_REVERSE.label == "reverse order"
