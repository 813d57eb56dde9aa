"""Sealing rules in the plan and the verdict: rules read from base (or the
lab's override), digests per rule, and a change an on_change = fail rule
forbids failing the verdict through old_tests."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from gatetui.backends.base import CommandResult
from gatetui.backends.local import LocalBackend
from gatetui.config import SealRule, SealSettings
from gatetui.gate.checks import CheckId, CheckResult, Status, Verdict
from gatetui.gate.events import RunFinished
from gatetui.gate.judging.results import SuiteRun, judge_old_tests
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.reports.junit import Outcome, Report, TestResult
from gatetui.gate.runner import run_gate
from tests.support.gating import shared_layers
from tests.support.repos import MakeRepo

PYPROJECT = (
    '[project]\nname = "calc"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n\n'
    '[[tool.gatetui.seal.rules]]\nname = "pytest settings"\n'
    'paths = ["pyproject.toml#tool.pytest.ini_options"]\non_change = "fail"\n'
)
PY_BASE = {"pyproject.toml": PYPROJECT, "calc/__init__.py": "", "tests/test_a.py": "def test_a():\n    pass\n"}


def passed_run() -> SuiteRun:
    report = Report.from_results([TestResult("t.py::a", Outcome.PASSED)])
    return SuiteRun("old tests", CommandResult(exit_code=0, wall_seconds=1.0), report)


def test_a_forbidden_change_fails_old_tests_even_when_base_tests_pass() -> None:
    result = judge_old_tests(passed_run(), ["tests/t.py"], [], ["tests/t.py (rule 'existing tests')"])
    assert result == CheckResult(
        CheckId.OLD_TESTS,
        Status.FAIL,
        (
            "changed although sealed with on_change = fail: tests/t.py (rule 'existing tests'); "
            "sealed files changed at head: tests/t.py"
        ),
    )
    assert judge_old_tests(passed_run(), ["tests/t.py"], []).status is Status.PASS


def test_plan_names_the_section_a_fail_rule_forbids(make_repo: MakeRepo) -> None:
    head = PYPROJECT.replace('testpaths = ["tests"]', 'testpaths = ["tests"]\naddopts = "-x"')
    plan = make_plan(GateRequest(make_repo(PY_BASE, {"pyproject.toml": head}), "main", "agent/x"))
    assert plan.forbidden == ["pyproject.toml#tool.pytest.ini_options (rule 'pytest settings')"]
    assert [(r.name, r.changed) for r in plan.digests.rules] == [
        ("default", ("pyproject.toml#tool.pytest.ini_options",)),
        ("pytest settings", ("pyproject.toml#tool.pytest.ini_options",)),
    ]


def test_a_version_bump_beside_the_sealed_section_is_no_change(make_repo: MakeRepo) -> None:
    head = PYPROJECT.replace('"0.1.0"', '"0.2.0"')
    plan = make_plan(GateRequest(make_repo(PY_BASE, {"pyproject.toml": head}), "main", "agent/x"))
    assert (plan.forbidden, [r.intact for r in plan.digests.rules]) == ([], [True, True])


def test_the_lab_override_replaces_base_rules(make_repo: MakeRepo) -> None:
    head = PYPROJECT.replace('"0.1.0"', '"0.2.0"')
    whole_file = SealSettings(paths=("tests/**",), rules=(SealRule("project file", ("pyproject.toml",), "fail"),))
    plan = make_plan(GateRequest(make_repo(PY_BASE, {"pyproject.toml": head}), "main", "agent/x", seal=whole_file))
    assert plan.forbidden == ["pyproject.toml (rule 'project file')"]
    assert plan.policy.sealed == ("tests/**", "pyproject.toml")
    assert plan.old_tests_files["pyproject.toml"] == PYPROJECT.encode()


ALLOW_DATA = (
    '[project]\nname = "calc"\n[[tool.gatetui.seal.rules]]\n'
    'name = "data"\npaths = ["tests/data/**"]\non_change = "allow"\n'
)


def test_a_path_under_allow_and_review_rules_is_put_back(make_repo: MakeRepo) -> None:
    """The default rule's tests/** covers tests/data too: the stricter rule wins."""
    base = {**PY_BASE, "pyproject.toml": ALLOW_DATA, "tests/data/x.txt": "1"}
    plan = make_plan(GateRequest(make_repo(base, {"tests/data/x.txt": "2"}), "main", "agent/x"))
    assert sorted(plan.old_tests_files) == [".base-pytest.ini", "tests/data/x.txt"]


def test_allow_rule_files_are_watched_not_put_back(make_repo: MakeRepo) -> None:
    toml = ALLOW_DATA + '[tool.gatetui.seal]\npaths = ["tests/*.py"]\n'
    base = {**PY_BASE, "pyproject.toml": toml, "tests/data/x.txt": "1"}
    plan = make_plan(GateRequest(make_repo(base, {"tests/data/x.txt": "2"}), "main", "agent/x"))
    assert sorted(plan.old_tests_files) == [".base-pytest.ini"]
    assert [(r.name, r.changed) for r in plan.digests.rules] == [("default", ()), ("data", ("tests/data/x.txt",))]
    assert (plan.forbidden, plan.digests.sealed_changed) == ([], ())


NODE_LOCK = (
    '{"name": "n", "version": "0.0.0", "lockfileVersion": 3, "requires": true, '
    '"packages": {"": {"name": "n", "version": "0.0.0"}}}\n'
)
NODE_TEST = "const test = require('node:test');\ntest('a', () => {});\n"


@pytest.mark.sandbox
@pytest.mark.install
def test_a_fail_rule_fails_the_verdict_of_a_change_whose_tests_all_pass(make_repo: MakeRepo, tmp_path: Path) -> None:
    base = {
        "package.json": '{"name": "n", "version": "0.0.0", "scripts": {"test": "node --test"}}\n',
        "package-lock.json": NODE_LOCK,
        "test/a.test.js": NODE_TEST,
        "gatetui.toml": '[seal]\npaths = ["test/**"]\non_change = "fail"\nallow_new = true\n',
    }
    repo = make_repo(base, {"test/a.test.js": NODE_TEST + "test('b', () => {});\n"})
    work = tmp_path / "work"
    work.mkdir()

    async def gate() -> RunFinished:
        plan = make_plan(GateRequest(repo, "main", "agent/x"))
        events = [e async for e in run_gate(plan, LocalBackend(work_root=work, layers=shared_layers()))]
        assert isinstance(events[-1], RunFinished)
        return events[-1]

    done = asyncio.run(gate())
    statuses = {r.id.value: r.status.value for r in done.results}
    old = {r.id: r for r in done.results}[CheckId.OLD_TESTS]
    assert (done.verdict, statuses["runs"], statuses["old_tests"]) == (Verdict.FAIL, "pass", "fail")
    assert old.detail.startswith("changed although sealed with on_change = fail: test/a.test.js (rule 'default')")
    assert done.digests.to_json()["rules"][0]["changed"] == ["test/a.test.js"]
