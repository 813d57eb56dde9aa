"""The import check's runtime view: what only the test extras brought is hidden.

Run for real by this project's own venv, where gatetui is installed from its
folder (editable, PEP 610 dir_info) with its test extras beside its runtime
dependencies: the same shape as a gated project's environment.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from gatetui.stacks.python.profile import PYTHON_IMPORT_CHECK
from tests.support.paths import TESTS

SCRIPT = PYTHON_IMPORT_CHECK.env["GATE_IMPORT_CHECK"]


def import_check(*modules: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-c", SCRIPT, *modules], capture_output=True, text=True, timeout=120, cwd=TESTS
    )


def test_runtime_dependencies_and_their_own_import() -> None:
    done = import_check("textual", "dulwich.repo", "json")
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize(("module", "dist"), [("pytest_randomly", "pytest-randomly"), ("xdist", "pytest-xdist")])
def test_a_module_only_the_test_extras_bring_is_named(module: str, dist: str) -> None:
    done = import_check(module)
    last = done.stderr.strip().splitlines()[-1]
    assert (done.returncode, last) == (
        1,
        (
            f"ModuleNotFoundError: No module named '{module}' at run time: only {dist} provides it, and it is "
            "installed for the tests alone (declare it in the project's runtime dependencies)"
        ),
    )
