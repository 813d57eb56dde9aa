"""Red team, sealing: test code that outlived base's tests in `old_tests`.

`old_tests` puts base's sealed files back over head and removes the ones
head added; what is not sealed is head's in that run too. Three places held
test code and were not sealed, and a broken change reached `pass` through
each: a module named like a test (`test_speedups.py`) inside the library,
which the diff rules leave alone as a test file, holding a forgery the
library imports; the helpers and an added `__init__.py` of a test folder
named other than `tests` (pytest imports both by bare name from beside the
tests); a vitest config or setup file added at head when base had none.
"""

from __future__ import annotations

import json

import pytest

from gatetui.gate.sealing.sealed import is_sealed, overlay
from gatetui.git.snapshot import Snapshot
from gatetui.stacks.registry import load_judge

PYPROJECT = '[project]\nname = "mathlib"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\ntestpaths = ["{path}"]\n'


def python_files(path: str, **more: str) -> dict[str, str]:
    return {
        "pyproject.toml": PYPROJECT.format(path=path),
        "mathlib/__init__.py": "",
        "mathlib/core.py": "def mul(a, b):\n    return a * b\n",
        **more,
    }


def test_a_module_named_like_a_test_is_sealed_wherever_it_is() -> None:
    """The diff rules leave test files alone, so no test file may outlive
    base's tests: one the library imports is gone in old_tests."""
    policy = load_judge(
        Snapshot.of_files(python_files("tests", **{"tests/test_math.py": "def test_x(): pass\n"}))
    ).policy
    assert [
        p
        for p in ("mathlib/test_speedups.py", "mathlib/speed_test.py", "mathlib/core.py", "mathlib/testing.py")
        if is_sealed(p, policy.sealed)
    ] == ["mathlib/test_speedups.py", "mathlib/speed_test.py"]


CHECKS = {
    "checks/test_math.py": "from helpers import check_mul\nimport mathlib.core\n\n\ndef test_mul():\n    check_mul(3, 4, 12)\n",
    "checks/helpers.py": "from mathlib.core import mul\n\n\ndef check_mul(a, b, want):\n    assert mul(a, b) == want\n",
    "checks/data.py": "ROWS = []\n",
}


def test_helpers_and_an_init_beside_tests_in_a_folder_of_another_name_are_sealed() -> None:
    policy = load_judge(Snapshot.of_files(python_files("checks", **CHECKS))).policy
    assert [
        p
        for p in ("checks/helpers.py", "checks/__init__.py", "checks/data.py", "mathlib/core.py", "mathlib/__init__.py")
        if is_sealed(p, policy.sealed)
    ] == ["checks/helpers.py", "checks/__init__.py"]


def test_old_tests_run_base_helpers_and_without_an_init_head_added() -> None:
    base_files = python_files("checks", **CHECKS)
    base = Snapshot.of_files(base_files)
    head = Snapshot.of_files(
        {
            **base_files,
            "mathlib/core.py": "def mul(a, b):\n    return a * b + 1\n",
            "checks/helpers.py": CHECKS["checks/helpers.py"].replace("== want", "in (want, want + 1)"),
            "checks/__init__.py": "import mathlib.core\nmathlib.core.mul = lambda a, b: a * b\n",
        }
    )
    assert overlay(base, head, load_judge(base).policy.sealed) == {
        "checks/helpers.py": CHECKS["checks/helpers.py"].encode(),
        "checks/__init__.py": None,
    }


@pytest.mark.parametrize(
    "spelling",
    [
        "from helpers import check_mul",
        "import helpers",
        "from checks.helpers import check_mul",
        "import checks.helpers",
    ],
)
def test_a_helper_is_sealed_however_base_tests_import_it(spelling: str) -> None:
    files = python_files("checks", **{"checks/test_math.py": f"{spelling}\n", "checks/helpers.py": ""})
    assert is_sealed("checks/helpers.py", load_judge(Snapshot.of_files(files)).policy.sealed)


def test_a_package_that_keeps_its_tests_inside_keeps_its_library_unsealed() -> None:
    """Honest lookalike: `pkg` is the library (it has an `__init__.py`), so
    its modules are never sealed, though its tests import them."""
    files = {
        "pyproject.toml": PYPROJECT.format(path="pkg"),
        "pkg/__init__.py": "",
        "pkg/core.py": "",
        "pkg/test_core.py": "from pkg import core\nimport helpers\n",
        "helpers.py": "",
    }
    policy = load_judge(Snapshot.of_files(files)).policy
    assert [p for p in ("pkg/core.py", "pkg/__init__.py", "helpers.py") if is_sealed(p, policy.sealed)] == []


PACKAGE = {"name": "sumlib", "version": "1.0.0", "type": "module", "scripts": {"test": "vitest run"}}


@pytest.mark.parametrize(
    "config", ["vitest.config.ts", "vitest.config.mjs", "vite.config.js", "vitest.workspace.json", "vitest.setup.ts"]
)
def test_a_vitest_config_head_adds_when_base_has_none_is_sealed(config: str) -> None:
    """A config at head could alias the library to another module or mock
    it from a setup file: it would apply to base's tests too."""
    base = Snapshot.of_files({"package.json": json.dumps(PACKAGE), "src/sum.js": "", "tests/sum.test.js": ""})
    head = Snapshot.of_files(
        {"package.json": json.dumps(PACKAGE), "src/sum.js": "", "tests/sum.test.js": "", config: "export default {};\n"}
    )
    assert overlay(base, head, load_judge(base).policy.sealed) == {config: None}


def test_node_library_files_stay_unsealed() -> None:
    base = Snapshot.of_files({"package.json": json.dumps(PACKAGE), "src/sum.js": "", "tests/sum.test.js": ""})
    sealed = load_judge(base).policy.sealed
    assert [
        p
        for p in ("src/sum.js", "src/vite.config.js", "vitest-helpers/index.js", "package.json")
        if is_sealed(p, sealed)
    ] == []
