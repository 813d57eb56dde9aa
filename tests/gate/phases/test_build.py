"""Nothing head's install leaves behind is trusted: attacks through the build.

Each head below breaks `mul` (mul(3, 4) gives 13) and hides a way to turn the
gate green anyway, the way an agent would: code in setup.py (base64, so no
diff rule reads it) that runs during the install and leaves something behind
for the test runs, or a file that takes the test runner's place. Each is
gated for real by the local backend, in overlay mode and in bind mode (the
fallback where overlays are refused); none may reach `pass`, and each is
stopped where the defence says it is.
"""

from __future__ import annotations

import py_compile
from pathlib import Path

import pytest

from gatetui.backends.isolation import probe_isolation
from gatetui.gate.checks import CheckId, Status, Verdict
from tests.support.local import fork_mode_or_skip
from tests.support.phases import ATTACK_MODES, BASE, details, gate, head_of, statuses
from tests.support.repos import MakeRepo, git

pytestmark = [
    pytest.mark.skipif(
        not probe_isolation().full,
        reason=f"the local backend cannot isolate runs here ({probe_isolation().reason}); CI runs as root",
    ),
    pytest.mark.sandbox,
    pytest.mark.install,
]


# `make test` gates one install that writes the tree (a conftest) and the two
# other ways in; the further tree writes in CI (`make test-slow`). Planted
# bytecode stays gated in `make test` below, and during a run in
# tests/gated/test_bytecode_planting.py.
TREE_ATTACKS = [
    pytest.param("rewrites_a_sealed_test", marks=pytest.mark.slow),
    "writes_a_conftest",
    pytest.param("plants_bytecode", marks=pytest.mark.slow),
    "shadows_the_runner",
    "writes_the_environment_at_import",
]


@pytest.mark.parametrize("mode", ATTACK_MODES)
@pytest.mark.parametrize("attack", TREE_ATTACKS)
def test_what_the_install_leaves_in_the_tree_never_reaches_a_run(
    make_repo: MakeRepo, tmp_path: Path, attack: str, mode: str
) -> None:
    """Each run gets a fresh export of head: the broken mul fails in every
    run and in base's tests, as it would for anyone who checks head out."""
    repo = make_repo(BASE, head_of(attack))
    refs = git(repo, "show-ref")
    done = gate(repo, tmp_path / "work", fork_mode_or_skip(mode))
    assert done.verdict is Verdict.FAIL
    assert (statuses(done)["install"], statuses(done)["runs"], statuses(done)["old_tests"]) == ("pass", "fail", "fail")
    assert "test_mul" in details(done)[CheckId.RUNS]
    assert git(repo, "show-ref") == refs
    assert git(repo, "status", "--porcelain") == ""


@pytest.mark.parametrize("mode", ATTACK_MODES)
@pytest.mark.parametrize(
    ("attack", "planted"), [("drops_a_pth_file", "zz_fast.py"), ("drops_a_sitecustomize", "sitecustomize.py")]
)
def test_files_no_distribution_installed_fail_the_install(
    make_repo: MakeRepo, tmp_path: Path, attack: str, planted: str, mode: str
) -> None:
    """The environment is checked before any test runs: a file in
    site-packages that no installed distribution's RECORD lists is named."""
    repo = make_repo(BASE, head_of(attack))
    done = gate(repo, tmp_path / "work", fork_mode_or_skip(mode))
    assert done.verdict is Verdict.FAIL
    install = {r.id: r for r in done.results}[CheckId.INSTALL]
    assert install.status is Status.FAIL
    assert install.detail.startswith("the install left files no installed distribution accounts for: ")
    assert planted in install.detail
    assert statuses(done)["runs"] == "skipped"


@pytest.mark.parametrize("mode", ATTACK_MODES)
def test_an_honest_change_with_a_build_still_passes(make_repo: MakeRepo, tmp_path: Path, mode: str) -> None:
    """The same project, a real fix and a setup.py that only builds."""
    head = {
        "mathlib/core.py": BASE["mathlib/core.py"] + "\n\ndef sub(a, b):\n    return a - b\n",
        "tests/test_sub.py": "from mathlib.core import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n",
    }
    done = gate(make_repo(BASE, head), tmp_path / "work", fork_mode_or_skip(mode))
    assert statuses(done) == {
        "install": "pass",
        "runs": "pass",
        "tests_kept": "pass",
        "no_new_skips": "pass",
        "old_tests": "pass",
        "hidden": "skipped",
        "covered": "pass",
        "bites": "pass",
    }


def test_bytecode_without_its_source_is_refused_before_anything_runs(make_repo: MakeRepo, tmp_path: Path) -> None:
    """A sourceless .pyc is imported as it is (no __pycache__, no cache
    prefix involved): head may not add one, whatever it holds."""
    compiled = tmp_path / "fast.pyc"
    source = tmp_path / "fast.py"
    source.write_text("def mul(a, b):\n    return a * b\n")
    py_compile.compile(str(source), cfile=str(compiled))
    repo = make_repo(BASE, {"mathlib/core.py": "from mathlib.fast import mul  # noqa: F401\n"})
    git(repo, "checkout", "-q", "agent/x")
    (repo / "mathlib" / "fast.pyc").write_bytes(compiled.read_bytes())
    git(repo, "add", "-f", "mathlib/fast.pyc")
    git(repo, "commit", "-qm", "speed")
    git(repo, "checkout", "-q", "main")
    done = gate(repo, tmp_path / "work", fork_mode_or_skip("bind"))
    install = {r.id: r for r in done.results}[CheckId.INSTALL]
    assert (done.verdict, install.status) == (Verdict.FAIL, Status.FAIL)
    assert install.detail == (
        "head adds code with no source to read (the gate judges only what it can read): mathlib/fast.pyc"
    )


@pytest.mark.parametrize("mode", ATTACK_MODES)
@pytest.mark.parametrize("attack", ["forges_a_distribution", "extends_a_real_record"])
def test_a_distribution_only_heads_build_vouches_for_is_not_believed(
    make_repo: MakeRepo, tmp_path: Path, attack: str, mode: str
) -> None:
    """RECORD files are the install's word: head's build code writes them
    too. Dependencies are installed in a step where no code of head's runs,
    so head's build can neither add a distribution nor extend a real one."""
    repo = make_repo(BASE, head_of(attack))
    done = gate(repo, tmp_path / "work", fork_mode_or_skip(mode))
    assert done.verdict is Verdict.FAIL
    found = statuses(done)
    assert found["install"] == "fail" or (found["runs"], found["old_tests"]) == ("fail", "fail")
