"""Real gates of heads that commit a link where base has its tests, or plant
one where the gate writes its own files, as root.

Before the gate wrote beneath a handle, a bind-mode copy wrote base's
sealed tests through `tests -> /somewhere` onto the host (as root, then
chowned to the run's uid), and the old-tests run found none of them: a
head that moved its tests away, loosened one and linked `tests` out of the
tree passed. And in every mode, a link run 1 put where the gate's folder
was carried the reruns' runner files (a sitecustomize.py among them) onto
the host. Now the link is named and fails `old_tests`, base's tests run in
a real folder, and nothing outside the run changes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gatetui.backends.isolation import probe_isolation
from gatetui.gate.checks import CheckId, Verdict
from gatetui.gate.events import RunFinished
from tests.support.gating import gate_locally
from tests.support.local import fork_mode_or_skip
from tests.support.phases import ATTACK_MODES
from tests.support.repos import git
from tests.support.trees import listing

pytestmark = [
    pytest.mark.skipif(
        not probe_isolation().full, reason=f"the local backend cannot isolate runs here ({probe_isolation().reason})"
    ),
    pytest.mark.sandbox,
    pytest.mark.install,
]

PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "leaps"
version = "0.1.0"
dependencies = []

[project.optional-dependencies]
test = ["pytest"]

[tool.setuptools]
packages = ["leaps"]
"""
RIGHT = "def is_leap(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n"
WRONG = "def is_leap(year):\n    return year % 4 == 0\n"
TESTS = (
    "from leaps import is_leap\n\n\ndef test_every_fourth_year():\n    assert is_leap(2024)\n\n\n"
    "def test_leap_day():\n    assert is_leap(1900) is {}\n"
)
BASE = {"pyproject.toml": PYPROJECT, "leaps/__init__.py": RIGHT, "tests/test_leap.py": TESTS.format("False")}
PLANT = (
    "import glob\nimport os\nimport shutil\n\n\ndef test_plant():\n"
    "    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\n"
    "    for gate in glob.glob(os.path.join(top, '.site-*')):\n"
    "        if not os.path.islink(gate):\n"
    "            shutil.rmtree(gate)\n"
    "            os.symlink({outside!r}, gate)\n"
)


def commit(repo: Path, files: dict[str, str | None], links: dict[str, str], message: str) -> None:
    for rel, text in files.items():
        path = repo / rel
        if text is None:
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for rel, target in links.items():
        if (repo / rel).is_dir():
            shutil.rmtree(repo / rel)
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).symlink_to(target)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


def make(
    tmp_path: Path, head: dict[str, str | None], links: dict[str, str], base: dict[str, str | None] | None = None
) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, dict(base or BASE), {}, "base")
    git(repo, "checkout", "-qb", "agent/x")
    commit(repo, head, links, "head")
    git(repo, "checkout", "-q", "main")
    return repo


def moved_away(tests: str = "tests") -> dict[str, str | None]:
    """The agent's hidden bug: the leap rule broken, the tests moved to spec/
    with the test that would catch it loosened."""
    return {
        "leaps/__init__.py": WRONG,
        tests: None,
        "spec/test_leap.py": TESTS.format("not None"),
        "pyproject.toml": PYPROJECT + '\n[tool.pytest.ini_options]\ntestpaths = ["spec"]\n',
    }


def gated(tmp_path: Path, repo: Path, mode: str) -> tuple[RunFinished, dict[str, str]]:
    fork_mode_or_skip(mode)
    finished = gate_locally(repo, tmp_path / "work", mode)
    return finished, {r.id.value: r.detail for r in finished.results}


def outside_folder(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary").write_text("host\n")
    return outside


def host(tmp_path: Path) -> dict[str, bytes]:
    """tmp_path but the repo (its .git changes with every commit) and the runs' work folder."""
    return {k: v for k, v in listing(tmp_path).items() if not k.startswith(("work", "repo"))}


@pytest.mark.parametrize(
    ("shape", "mode"),
    [
        ("absolute", "bind"),
        ("absolute", "overlay"),
        pytest.param("dotdot", "bind", marks=pytest.mark.slow),  # in CI (`make test-slow`)
        pytest.param("nested", "bind", marks=pytest.mark.slow),
    ],
)
def test_a_head_linking_its_tests_out_of_the_tree_fails_and_nothing_lands_outside(
    tmp_path: Path, mode: str, shape: str
) -> None:
    outside = outside_folder(tmp_path)
    if shape == "nested":
        base = {
            **{k: v for k, v in BASE.items() if k != "tests/test_leap.py"},
            "tests/unit/test_leap.py": TESTS.format("False"),
        }
        repo = make(tmp_path, moved_away("tests/unit"), {"tests/unit": str(outside)}, base)
        link, target = "tests/unit", str(outside)
    else:
        target = str(outside) if shape == "absolute" else "../../.."  # from a run's tree: tmp_path
        repo, link = make(tmp_path, moved_away(), {"tests": target}), "tests"
    before = host(tmp_path)
    finished, detail = gated(tmp_path, repo, mode)
    assert host(tmp_path) == before  # nothing written outside the run, as root or as anyone
    assert finished.verdict is Verdict.FAIL
    assert f"head committed {link} as a link out of the tree (-> {target})" in detail[CheckId.OLD_TESTS.value]
    sealed = "tests/unit/test_leap.py" if shape == "nested" else "tests/test_leap.py"
    assert detail[CheckId.OLD_TESTS.value].count(f"{sealed}::test_leap_day fails under base's tests") == 1


@pytest.mark.parametrize("mode", ATTACK_MODES)  # the other fork mode in CI (`make test-slow`)
def test_an_honest_move_behind_a_link_inside_the_tree_still_passes(tmp_path: Path, mode: str) -> None:
    """`tests -> spec`, pytest still pointed at tests/: base's tests are put
    back in a real tests/ and pass on head's code; the link stays head's own
    in its runs."""
    pytest_at_tests = PYPROJECT + '\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    repo = make(
        tmp_path,
        {"tests": None, "spec/test_leap.py": TESTS.format("False"), "pyproject.toml": pytest_at_tests},
        {"tests": "spec"},
    )
    finished, detail = gated(tmp_path, repo, mode)
    assert (finished.verdict, detail[CheckId.OLD_TESTS.value]) == (
        Verdict.PASS,
        "sealed files changed at head: spec/test_leap.py, tests/test_leap.py; head changed how it is "
        "judged (ignored, base's used): pyproject.toml#tool.pytest.ini_options",
    )


@pytest.mark.parametrize("mode", ATTACK_MODES)
def test_a_link_run_1_plants_at_the_gates_folder_carries_no_file_out(tmp_path: Path, mode: str) -> None:
    """The reruns of head's new test write the gate's runner files into the
    copy run 1 ran in: into the gate's own folder, made again."""
    outside = outside_folder(tmp_path)
    repo = make(tmp_path, {"tests/test_plant.py": PLANT.format(outside=str(outside))}, {})
    before = host(tmp_path)
    finished, detail = gated(tmp_path, repo, mode)
    assert host(tmp_path) == before
    assert os.listdir(outside) == ["canary"]
    assert (finished.verdict, detail[CheckId.RUNS.value]) == (
        Verdict.PASS,
        "3 of 3 runs passed; head's new and changed tests passed 6 reruns",
    )
