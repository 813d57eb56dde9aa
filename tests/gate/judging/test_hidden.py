"""Hidden tests: picked from the caller's files, run over base's sealed files
in a copy of their own, and told to the agent as a count only."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from gatetui.backends.base import CommandResult
from gatetui.cli.main import main
from gatetui.errors import BackendError
from gatetui.gate import api
from gatetui.gate.checks import CheckId, Status
from gatetui.gate.events import CheckFinished, CheckStarted, RunFinished
from gatetui.gate.judging.hidden import HiddenTests, judge_hidden, read_hidden, select_hidden
from gatetui.gate.plan import GateRequest, Plan, make_plan
from gatetui.gate.reports.junit import Outcome, Report, TestResult
from gatetui.gate.runner import run_gate
from gatetui.supervise.gate_inputs import repo_state
from gatetui.supervise.store import repo_key
from tests.support.hidden import BASE, HIDDEN_SOURCE, hidden, is_test, results, run
from tests.support.repos import MakeRepo, git
from tests.support.supervising import FakeBackend

FAILED = CommandResult(exit_code=1, wall_seconds=1.0)


def test_select_picks_the_configured_folder_and_strips_it() -> None:
    given = {"math/tests/test_h.py": HIDDEN_SOURCE, "math/data.txt": b"x", "other/test_o.py": b""}
    found, problem = select_hidden(given, "math", is_test)
    assert problem == ""
    assert found is not None
    assert (sorted(found.files), found.test_files) == (["data.txt", "tests/test_h.py"], ("tests/test_h.py",))
    assert found.definitions() == [("tests/test_h.py", "test_two"), ("tests/test_h.py", "test_five")]
    assert found.digest == select_hidden(given, "math/", is_test)[0].digest  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("given", "words"),
    [
        (None, "no hidden tests were passed to the gate"),
        ({"other/test_o.py": b""}, "holds no hidden test file under hidden/math/"),
        ({"math/conftest.py": b"", "math/notes.txt": b""}, "holds no hidden test file under hidden/math/"),
    ],
)
def test_configured_without_tests_says_what_to_do(given: dict[str, bytes] | None, words: str) -> None:
    found, problem = select_hidden(given, "math", is_test)
    assert found is None
    assert problem.startswith("hidden = 'math' is configured, but ")
    assert words in problem


def test_judge_counts_and_never_names() -> None:
    tests = hidden({"tests/test_h.py": HIDDEN_SOURCE})
    P, F = Outcome.PASSED, Outcome.FAILED
    assert judge_hidden(run(results(test_two=P, test_five=P)), tests).detail == "2 of 2 hidden tests passed"
    failed = judge_hidden(run(results(test_two=P, test_five=F), FAILED), tests)
    assert (failed.id, failed.status, failed.detail) == (CheckId.HIDDEN, Status.FAIL, "1 of 2 hidden tests failed")
    # a hidden test the run never reported (deselected) counts as failed
    assert judge_hidden(run(results(test_two=P)), tests).detail == "1 of 2 hidden tests failed"
    # a file that failed to load counts through the tests it defines
    broken = Report.from_results([TestResult("tests/test_h.py", Outcome.ERROR)])
    assert judge_hidden(run(broken, FAILED), tests).detail == "2 of 2 hidden tests failed"
    assert judge_hidden(run(None, FAILED), tests).detail == "the hidden run wrote no readable report (exit code 1)"
    timed_out = CommandResult(exit_code=None, wall_seconds=30.0, timed_out=True)
    assert judge_hidden(run(None, timed_out), tests).detail == "the hidden run stopped at its time limit after 30 s"


NODE_HIDDEN = (
    b'const { test, describe } = require("node:test");\n'
    b'test("doubles five", () => {});\n'
    b'describe("calc", () => { test("doubles zero", () => {}); });\n'
)


def node_tests(files: dict[str, bytes]) -> HiddenTests:
    found, problem = select_hidden(files, ".", lambda path: path.endswith(".test.js"))
    assert (problem, found and found.test_files) == ("", tuple(sorted(files)))
    assert found is not None  # for the type checker; the line above asserts the value
    return found


def test_judge_counts_node_tests_whose_report_names_no_file() -> None:
    """node before 24 writes a testcase's title and describes, no file: the
    hidden run named the hidden files alone, so its titles are theirs."""
    tests = node_tests({"test/hidden_calc.test.js": NODE_HIDDEN})
    P, F = Outcome.PASSED, Outcome.FAILED
    both = Report.from_results([TestResult("doubles five", P), TestResult("calc > doubles zero", P)])
    assert judge_hidden(run(both), tests).detail == "2 of 2 hidden tests passed"
    one = Report.from_results([TestResult("doubles five", F), TestResult("calc > doubles zero", P)])
    assert judge_hidden(run(one, FAILED), tests).detail == "1 of 2 hidden tests failed"
    # a defined test missing from the report still counts as failed
    missing = Report.from_results([TestResult("doubles five", P)])
    assert judge_hidden(run(missing), tests).detail == "1 of 2 hidden tests failed"
    # node 24 names the file: the same tests, by file and title
    with_file = Report.from_results(
        [
            TestResult("test/hidden_calc.test.js::doubles five", P, file="test/hidden_calc.test.js"),
            TestResult("test/hidden_calc.test.js::calc > doubles zero", P, file="test/hidden_calc.test.js"),
        ]
    )
    assert judge_hidden(run(with_file), tests).detail == "2 of 2 hidden tests passed"


def test_read_hidden_skips_caches_and_links(tmp_path: Path) -> None:
    (tmp_path / "h" / "tests" / "__pycache__").mkdir(parents=True)
    (tmp_path / "h" / "tests" / "test_a.py").write_bytes(b"def test_a(): pass\n")
    (tmp_path / "h" / "tests" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (tmp_path / "secret").write_text("no")
    os.symlink(tmp_path / "secret", tmp_path / "h" / "tests" / "link.py")
    assert read_hidden(tmp_path / "h") == {"tests/test_a.py": b"def test_a(): pass\n"}
    assert read_hidden(tmp_path / "missing") == {}


# Head special-cases the visible input, and adds a conftest that keeps only
# the visible test file: the hidden run uses base's conftest, so it runs anyway.
HEAD = {
    "mathlib/__init__.py": "def double(x):\n    return 6 if x == 3 else 0\n",
    "tests/conftest.py": (
        "def pytest_collection_modifyitems(config, items):\n"
        "    items[:] = [i for i in items if 'test_math.py' in i.nodeid]\n"
    ),
}


def check_json(repo: Path, state: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    code = main(["check", str(repo), "--base", "main", "--head", "agent/x", "--json", "--state-dir", str(state)])
    data = json.loads(capsys.readouterr().out)
    assert code == (1 if data["verdict"] == "fail" else 3)
    return data


@pytest.mark.sandbox
@pytest.mark.install
def test_check_reads_hidden_tests_from_the_state_dir(
    make_repo: MakeRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(BASE, HEAD)
    state = tmp_path / "state"
    none = check_json(repo, state, capsys)
    hidden_check = {c["id"]: c for c in none["checks"]}["hidden"]  # type: ignore[index,union-attr]
    assert (none["verdict"], hidden_check["status"]) == ("error", "error")
    folder = f"{state}/repos/{repo_key(repo)}/hidden/math/"  # the full path to fill, and how
    assert f"no hidden test file is in {folder}: add the tests there (mkdir -p {folder})" in hidden_check["detail"]
    assert not state.exists()  # reading the state directory created nothing

    folder = repo_state(state, repo) / "hidden" / "math" / "tests"
    folder.mkdir(parents=True)
    (folder / "test_hidden_math.py").write_bytes(HIDDEN_SOURCE)
    data = check_json(repo, state, capsys)
    checks = {c["id"]: c for c in data["checks"]}  # type: ignore[union-attr]
    assert (data["verdict"], checks["runs"]["status"]) == ("fail", "pass")
    assert (checks["hidden"]["status"], checks["hidden"]["detail"]) == ("fail", "2 of 2 hidden tests failed")
    assert data["digests"]["hidden"]["files"] == 1  # type: ignore[index]


def clone_at_agent_branch(repo: Path, clone: Path) -> Path:
    """The agent's working copy: a clone of `repo`, on agent/x, with nothing left to commit."""
    git(repo.parent, "clone", "-q", str(repo), str(clone))
    git(clone, "checkout", "-q", "agent/x")
    return clone


def plant_hidden(state_home: Path, repo: Path) -> None:
    folder = repo_state(state_home / "gatetui", repo) / "hidden" / "math" / "tests"
    folder.mkdir(parents=True)
    (folder / "test_hidden_math.py").write_bytes(HIDDEN_SOURCE)


def test_standalone_submit_plans_with_the_hidden_tests_check_plans_with(
    make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both read the default state directory's hidden folder of the working copy:
    the same tests, the same digest, no "nothing was passed" (stopped before any sandbox)."""
    clone = clone_at_agent_branch(make_repo(BASE, HEAD), tmp_path / "agent")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    plant_hidden(tmp_path / "xdg", clone)
    plans: list[Plan] = []

    def plan_then_stop(request: GateRequest) -> Plan:
        plans.append(make_plan(request))
        raise BackendError("stopped before any sandbox")

    monkeypatch.setattr(api, "make_plan", plan_then_stop)
    assert main(["check", str(clone), "--base", "origin/main", "--head", "agent/x"]) == 3
    assert main(["submit", "--repo", str(clone), "--standalone"]) == 3
    seen = [
        (p.request.base, p.hidden_problem, p.hidden.files if p.hidden else None, p.hidden.digest if p.hidden else "")
        for p in plans
    ]
    assert seen[0][:3] == ("origin/main", "", {"tests/test_hidden_math.py": HIDDEN_SOURCE})
    assert (seen[1], len(seen[0][3])) == (seen[0], 64)


@pytest.mark.sandbox
@pytest.mark.install
def test_standalone_submit_runs_the_hidden_tests_as_check_does(
    make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clone = clone_at_agent_branch(make_repo(BASE, HEAD), tmp_path / "agent")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    plant_hidden(tmp_path / "xdg", clone)
    assert main(["check", str(clone), "--base", "origin/main", "--head", "agent/x"]) == 1
    checked = capsys.readouterr().out.splitlines()
    assert main(["submit", "--repo", str(clone), "--standalone"]) == 1
    submitted = capsys.readouterr().out.splitlines()
    line = "FAIL hidden tests pass: 2 of 2 hidden tests failed"
    assert (line in checked, line in submitted, submitted[-1]) == (True, True, "verdict: fail")


def test_an_install_that_never_ran_leaves_the_hidden_tests_not_run_announced_once(make_repo: MakeRepo) -> None:
    """Hidden is announced with the plan; a refused install settles it as
    not run without announcing it a second time (a consumer folds each
    CheckStarted into a row of its own)."""
    repo = make_repo(BASE, {**HEAD, "mathlib/odd\x01name.py": "x = 1\n"})
    plan = make_plan(GateRequest(repo, "main", "agent/x", hidden={"math/tests/test_h.py": HIDDEN_SOURCE}))

    async def gate() -> list[object]:
        return [e async for e in run_gate(plan, FakeBackend())]

    events = asyncio.run(gate())
    assert [e.check for e in events if isinstance(e, CheckStarted)].count(CheckId.HIDDEN) == 1
    (hidden_end,) = [e.result for e in events if isinstance(e, CheckFinished) and e.result.id is CheckId.HIDDEN]
    assert (hidden_end.status, hidden_end.detail) == (Status.SKIPPED, "not run: install failed")
    done = events[-1]
    assert isinstance(done, RunFinished)
    assert [(r.id.value, r.status.value) for r in done.results] == [
        ("install", "fail"),
        ("runs", "skipped"),
        ("tests_kept", "pass"),
        ("no_new_skips", "pass"),
        ("old_tests", "skipped"),
        ("hidden", "skipped"),
        ("covered", "skipped"),
        ("bites", "skipped"),
    ]
