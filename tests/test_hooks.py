"""Ways to bend a pytest verdict from outside the test files, read from the diff."""

from __future__ import annotations

from hypothesis import given, strategies as st

from gatetui.gate import hooks
from gatetui.gate.hooks import scan_hooks
from gatetui.snapshot import Snapshot

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
        "head registers pytest plugin `helpers` (pytest11 entry point) (pyproject.toml)"]


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
    found = scan({"pyproject.toml": PYPROJECT, "p/a.py": ""},
                 {"pyproject.toml": text, "p/a.py": text, "setup.cfg": text, "setup.py": text})
    assert all(f.path.startswith("p/a.py:") for f in found.skips)
