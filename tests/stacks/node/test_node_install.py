"""Nothing head's npm install leaves in node_modules is trusted.

`npm ci` runs the root package's lifecycle scripts (preinstall, install,
postinstall, prepare) and those of any package linked from the tree: that is
head's code, run while node_modules is being made, and node_modules is what
every later run executes (vitest itself). Each head below breaks `sum` and
hides a way to turn the gate green from its install, the way an agent would;
each is gated for real by the local backend and none may reach `pass`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gatetui.backends.isolation import probe_isolation
from gatetui.backends.local import LocalBackend
from gatetui.gate.checks import Verdict
from gatetui.gate.events import RunFinished
from tests.support.gating import gate_locally, gate_with
from tests.support.node import BASE, BROKEN, PACKAGE, WRAP_VITEST, head_with, hidden
from tests.support.repos import MakeRepo, git

pytestmark = [
    pytest.mark.skipif(
        not probe_isolation().full,
        reason=f"the local backend cannot isolate runs here ({probe_isolation().reason}); CI runs as root",
    ),
    pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed on this machine"),
    pytest.mark.sandbox,
    pytest.mark.install,
]


def gate(repo: Path, work: Path) -> RunFinished:
    return gate_locally(repo, work)


def results(done: RunFinished) -> dict[str, tuple[str, str]]:
    return {r.id.value: (r.status.value, r.detail) for r in done.results}


@pytest.mark.parametrize("when", ["postinstall", pytest.param("prepare", marks=pytest.mark.slow)])  # prepare in CI
def test_a_runner_rewritten_by_heads_lifecycle_script_fails_the_install(
    make_repo: MakeRepo, tmp_path: Path, when: str
) -> None:
    """Where node_modules is made per gate (no dependency layer kept: the
    runtime backend, or a machine that cannot show one in the tree), head's
    scripts can write it; the fingerprints around them say what changed."""
    repo = make_repo(BASE, head_with(WRAP_VITEST, when))
    done = gate_with(repo, LocalBackend(work_root=tmp_path / "work"))
    assert done.verdict is Verdict.FAIL
    status, detail = results(done)["install"]
    assert status == "fail"
    assert detail.startswith(
        "head's npm lifecycle scripts changed the environment the test runs execute: "
        "node_modules/vitest/real.mjs added, node_modules/vitest/vitest.mjs changed"
    )
    assert git(repo, "status", "--porcelain") == ""


def test_an_npmrc_that_runs_heads_code_in_the_dependencies_scripts_is_cut(make_repo: MakeRepo, tmp_path: Path) -> None:
    """node-options in head's .npmrc would run its code inside npm's
    rebuild of the dependencies, before the fingerprint: the key is dropped,
    so vitest is the index's and the broken sum fails."""
    head = {
        "src/sum.js": BROKEN,
        "scripts/setup.cjs": hidden(WRAP_VITEST),
        ".npmrc": "fund=false\nnode-options=--require ./scripts/setup.cjs\n",
    }
    done = gate(make_repo(BASE, head), tmp_path / "work")
    assert done.verdict is Verdict.FAIL
    assert [results(done)[c][0] for c in ("install", "runs", "old_tests")] == ["pass", "fail", "fail"]
    assert "adds a list of numbers" in results(done)["runs"][1]


def test_a_local_package_install_script_never_runs(make_repo: MakeRepo, tmp_path: Path) -> None:
    """A dependency that lives in the tree is head's code: its postinstall
    would rewrite vitest like the root's."""
    helper = {"name": "helper", "version": "1.0.0", "scripts": {"postinstall": "node setup.cjs"}}
    package = {**PACKAGE, "dependencies": {"helper": "file:tools/helper"}}
    lock = json.loads(BASE["package-lock.json"])
    lock["packages"][""]["dependencies"] = {"helper": "file:tools/helper"}
    lock["packages"]["node_modules/helper"] = {"resolved": "tools/helper", "link": True}
    lock["packages"]["tools/helper"] = {"version": "1.0.0", "hasInstallScript": True}
    undo = "process.chdir('../..');\n" + WRAP_VITEST
    head = {
        "src/sum.js": BROKEN,
        "package.json": json.dumps(package, indent=2) + "\n",
        "package-lock.json": json.dumps(lock, indent=2) + "\n",
        "tools/helper/package.json": json.dumps(helper) + "\n",
        "tools/helper/setup.cjs": hidden(undo),
    }
    done = gate(make_repo(BASE, head), tmp_path / "work")
    assert done.verdict is Verdict.FAIL
    assert [results(done)[c][0] for c in ("install", "runs", "old_tests")] == ["pass", "fail", "fail"]


def test_a_node_modules_committed_to_the_tree_is_not_what_runs(make_repo: MakeRepo, tmp_path: Path) -> None:
    head = {
        "src/sum.js": BROKEN,
        ".gitignore": "",
        "node_modules/vitest/vitest.mjs": "#!/usr/bin/env node\nprocess.exit(0);\n",
        "node_modules/.bin/vitest": "#!/bin/sh\nexit 0\n",
    }
    done = gate(make_repo(BASE, head), tmp_path / "work")
    assert done.verdict is Verdict.FAIL
    assert [results(done)[c][0] for c in ("runs", "old_tests")] == ["fail", "fail"]


def test_a_project_with_a_vitest_config_passes(make_repo: MakeRepo, tmp_path: Path) -> None:
    """vite would write its bundled config under node_modules, which the
    runs see read-only; vitest 3.1+ is told to load it in place."""
    config = (
        'import { defineConfig } from "vitest/config";\n'
        'export default defineConfig({ test: { include: ["tests/**/*.test.js"] } });\n'
    )
    repo = make_repo(
        {**BASE, "vitest.config.js": config},
        {
            "tests/more.test.js": 'import { expect, it } from "vitest";\n'
            'import { sum } from "../src/sum.js";\n'
            'it("adds one number", () => { expect(sum([4])).toBe(4); });\n'
        },
    )
    done = gate(repo, tmp_path / "work")
    assert ({k: v[0] for k, v in results(done).items()}, done.verdict) == (
        {
            "install": "pass",
            "runs": "pass",
            "tests_kept": "pass",
            "no_new_skips": "pass",
            "old_tests": "pass",
            "hidden": "skipped",
            "covered": "skipped",
            "bites": "skipped",
        },
        Verdict.PASS,
    )


def test_an_install_script_that_builds_into_the_tree_still_passes(make_repo: MakeRepo, tmp_path: Path) -> None:
    """The common honest case: prepare builds something of the project's
    own; node_modules is left as the index gave it."""
    build = "require('fs').mkdirSync('dist', {recursive: true}); require('fs').writeFileSync('dist/v.txt', '1');\n"
    package = {**PACKAGE, "scripts": {**PACKAGE["scripts"], "prepare": "node scripts/build.cjs"}}  # type: ignore[dict-item]
    head = {
        "package.json": json.dumps(package, indent=2) + "\n",
        "scripts/build.cjs": build,
        "tests/more.test.js": 'import { expect, it } from "vitest";\nimport { sum } from "../src/sum.js";\n'
        'it("adds one number", () => { expect(sum([4])).toBe(4); });\n',
    }
    done = gate(make_repo(BASE, head), tmp_path / "work")
    assert {k: v[0] for k, v in results(done).items()} == {
        "install": "pass",
        "runs": "pass",
        "tests_kept": "pass",
        "no_new_skips": "pass",
        "old_tests": "pass",
        "hidden": "skipped",
        "covered": "skipped",
        "bites": "skipped",
    }
    assert done.verdict is Verdict.PASS
