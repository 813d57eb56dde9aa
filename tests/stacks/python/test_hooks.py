"""Ways to bend a pytest verdict from outside the test files, read from the diff."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatetui.git.snapshot import Snapshot
from gatetui.stacks.python import hooks
from gatetui.stacks.python.hooks import scan_hooks

PYPROJECT = '[project]\nname = "p"\nversion = "1"\n'


def is_test(path: str) -> bool:
    return path.startswith("tests/")


def scan(base: dict[str, str], head: dict[str, str]):  # type: ignore[no-untyped-def]
    return scan_hooks(Snapshot.of_files(base), Snapshot.of_files(head), is_test)


def test_a_pytest11_entry_point_added_in_pyproject_is_named() -> None:
    head = PYPROJECT + '\n[project.entry-points.pytest11]\nhelpers = "p.helpers"\n'
    found = scan({"pyproject.toml": PYPROJECT}, {"pyproject.toml": head})
    assert found.plugins == ("helpers",)
    assert [str(f) for f in found.findings] == [
        "head registers pytest plugin `helpers` (pytest11 entry point) (pyproject.toml)"
    ]


def test_a_plugin_base_already_had_is_not_a_finding() -> None:
    both = PYPROJECT + '\n[project.entry-points.pytest11]\nhelpers = "p.helpers"\n'
    assert scan({"pyproject.toml": both}, {"pyproject.toml": both + "# more\n"}).findings == ()


def test_plugins_from_setup_cfg_and_setup_py() -> None:
    cfg = "[options.entry_points]\npytest11 =\n    one = p.one\n    two = p.two:plugin\n"
    setup = "setup(entry_points={'pytest11': ['three = p.three']})\n"
    assert hooks.pytest_plugins(Snapshot.of_files({"setup.cfg": cfg, "setup.py": setup})) == ["one", "three", "two"]


def test_startup_hooks_anywhere_are_findings() -> None:
    found = scan({"p/a.py": ""}, {"p/a.py": "", "sitecustomize.py": "import x\n", "src/zz.pth": "import y\n"})
    assert [f.path for f in found.findings] == ["sitecustomize.py", "src/zz.pth"]


def test_a_skip_raised_from_library_code_is_named_with_its_line() -> None:
    base = "def mul(a, b):\n    return a * b\n"
    head = "import unittest\n\n\ndef mul(a, b):\n    raise unittest.SkipTest('later')\n"
    (skip,) = scan({"p/core.py": base}, {"p/core.py": head}).skips
    assert (skip.path, skip.what) == ("p/core.py:5", "skip raised from library code: raise unittest.SkipTest('later')")


def test_skips_in_test_files_and_comments_are_left_to_the_other_scanners() -> None:
    head = {"tests/test_a.py": "import pytest\npytest.skip('x')\n", "p/a.py": "x = 1  # pytest.skip( later\n"}
    assert scan({"tests/test_a.py": "", "p/a.py": ""}, head).skips == ()


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_the_scan_never_fails_on_any_text(text: str) -> None:
    found = scan(
        {"pyproject.toml": PYPROJECT, "p/a.py": ""},
        {"pyproject.toml": text, "p/a.py": text, "setup.cfg": text, "setup.py": text},
    )
    python = ("p/a.py:", "setup.py:")  # the only python files; the TOML and INI files are never read as code
    assert [f.path for f in found.skips if not f.path.startswith(python)] == []
    assert [f.path for f in found.reaches if not f.path.startswith(python)] == []


def test_a_setup_py_reading_the_runners_environment_is_named() -> None:
    """Found by the property above: setup.py is library code too, and a build
    script that reads PYTEST_ADDOPTS is looking for the test runner."""
    found = scan({"pyproject.toml": PYPROJECT}, {"pyproject.toml": PYPROJECT, "setup.py": "PYTEST_ADDOPTS"})
    assert [(f.path, f.what) for f in found.reaches] == [
        ("setup.py:1", "library code checks whether a test runner is loaded: PYTEST_ADDOPTS")
    ]


@pytest.mark.parametrize(
    "line",
    [
        "import _pytest.reports as reports",
        "from _pytest.runner import CallInfo",
        "pytest._pytest_was_here = _pytest.reports.TestReport",
        "def pytest_runtest_makereport(item, call):",
        "config.pluginmanager.register(Forger())",
        "sys.modules['pytest'].main = lambda *a: 0",
        "os._exit(0)",
        "sys.excepthook = lambda *a: None",
        "unittest.TestCase.run = lambda self, result=None: None",
        "unittest.TextTestResult.addFailure = unittest.TextTestResult.addSuccess",
    ],
)
def test_library_code_reaching_into_the_test_runner_is_named_with_its_line(line: str) -> None:
    head = f"import os, sys, unittest\n\n\n{line}\n"
    (reach,) = scan({"p/core.py": "import os, sys, unittest\n"}, {"p/core.py": head}).reaches
    assert (reach.path, reach.what) == ("p/core.py:4", f"library code reaches into the test runner: {line}")


@pytest.mark.parametrize(
    "line",
    [
        "if sys.excepthook == sys.__excepthook__:",  # a comparison, not a swap
        "x = 1  # os._exit(0) would be wrong here",  # a comment
        "my_pytest_helpers = 3",
        "result = TestCase.run_count",
    ],
)
def test_lookalikes_are_not_reaches(line: str) -> None:
    assert scan({"p/core.py": ""}, {"p/core.py": line + "\n"}).reaches == ()


@pytest.mark.parametrize(
    "line, what",
    [
        ('if "pytest" in sys.modules:', "checks whether a test runner is loaded"),
        ("if 'pytest' not in sys.modules.keys():", "checks whether a test runner is loaded"),
        ('    return a * b if sys.modules.get("_pytest") else fast(a, b)', "checks whether a test runner is loaded"),
        ('under_test = any("pytest" in name for name in sys.modules)', "checks whether a test runner is loaded"),
        ('TESTING = os.environ.get("PYTEST_CURRENT_TEST") is not None', "checks whether a test runner is loaded"),
        ('if "PYTEST_VERSION" in os.environ:', "checks whether a test runner is loaded"),
        ("worker = os.getenv('PYTEST_XDIST_WORKER')", "checks whether a test runner is loaded"),
        ('if importlib.util.find_spec("pytest") is not None:', "checks whether a test runner is loaded"),
        ('IN_TESTS = "pytest" in sys.argv[0]', "checks whether a test runner is loaded"),
        ('if any("_pytest" in f.filename for f in inspect.stack()):', "checks whether a test runner is loaded"),
        ("mode = os.environ.get('pytest_mode', '')", "checks whether a test runner is loaded"),
        ('if os.getcwd().startswith("/tmp/gatetui"):', "looks for the gate's sandbox"),
        ('GATED = "GATETUI_UID_RANGE" in os.environ', "looks for the gate's sandbox"),
        # what the gate sets in every run, which a person's own run does not have
        ("    return a * b if sys.pycache_prefix else a + b", "looks for the gate's sandbox"),
        ("if sys.flags.safe_path:", "looks for the gate's sandbox"),
        ('if os.environ.get("PYTHONSAFEPATH") == "1":', "looks for the gate's sandbox"),
        ("GATED = 'PYTHONPYCACHEPREFIX' in os.environ", "looks for the gate's sandbox"),
        ('if "sitecustomize" in sys.modules:', "looks for the gate's sandbox"),
        ('if any(".site-" in p for p in sys.path):', "looks for the gate's sandbox"),
        ("if os.getuid() >= 420000:", "looks for the gate's sandbox"),
        ("if 100000 < os.geteuid():", "looks for the gate's sandbox"),
    ],
)
def test_library_code_that_asks_for_the_runner_or_the_sandbox_is_named(line: str, what: str) -> None:
    """Code right only under the runner (or only in the gate) passes every
    run, base's tests included: a person is shown the line."""
    head = f"import importlib.util, inspect, os, sys\n\n\n{line}\n"
    (reach,) = scan({"p/core.py": "import importlib.util, inspect, os, sys\n"}, {"p/core.py": head}).reaches
    assert (reach.path, reach.what) == ("p/core.py:4", f"library code {what}: {line.strip()}")


@pytest.mark.parametrize(
    "line",
    [
        'REQUIRES = ["pytest>=8"]',  # pytest named, nothing of the running process asked
        "modules = sorted(sys.modules)",  # sys.modules, no runner named
        'os.environ["PYTEST_LIKE"] = "1"',
        "x = 1  # under pytest, sys.modules holds it",
        "gatetui_compatible = True",
        "if os.getuid() == 0:",  # root, not a uid range
        'site_dir = "site-packages"',
    ],
)
def test_lookalikes_of_runner_checks_are_not_findings(line: str) -> None:
    assert scan({"p/core.py": ""}, {"p/core.py": line + "\n"}).reaches == ()


def test_reaches_in_test_files_or_a_pytest_plugin_project_are_not_findings() -> None:
    patch = "import _pytest.reports\n"
    assert scan({"tests/conftest.py": ""}, {"tests/conftest.py": patch}).reaches == ()
    plugin = PYPROJECT + '\n[project.entry-points.pytest11]\nmine = "p.plugin"\n'
    assert (
        scan({"pyproject.toml": plugin, "p/plugin.py": ""}, {"pyproject.toml": plugin, "p/plugin.py": patch}).reaches
        == ()
    )


def test_a_skip_through_pytest_internals_is_a_skip_not_also_a_reach() -> None:
    found = scan({"p/core.py": ""}, {"p/core.py": "import _pytest.outcomes\n_pytest.outcomes.skip('x')\n"})
    assert ([f.path for f in found.skips], [f.path for f in found.reaches]) == (["p/core.py:2"], ["p/core.py:1"])
