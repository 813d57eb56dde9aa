"""The suite's layout: tests/ mirrors gatetui/, and what tests share lives
in tests/support/, never in another test module.

A test module used as a library of helpers ties the two modules' fates: a
rename or a move of the one breaks the other, pytest may import it twice,
and the helpers hide among tests. Every import in tests/ is read with ast,
lazy ones inside functions included."""

from __future__ import annotations

import ast
from pathlib import Path

import gatetui
from tests.support.paths import TESTS

PACKAGE = Path(gatetui.__file__).parent
# Folders of tests/ that mirror no folder of gatetui/: whole gates across
# the package, `gatetui web` in a real browser, the bench's own scripts,
# and what the tests share or read.
APART = {"gated", "browser", "bench", "support", "runtime_emulator", "fixtures"}


def imported_modules(tree: ast.Module, package: str) -> list[str]:
    """Every module an import statement names, `from a import b` as both
    `a` and `a.b` (b may be a module), relative imports resolved against
    `package`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            found += [module, *(f"{module}.{alias.name}" for alias in node.names)]
    return found


def imports_of_test_modules(root: Path = TESTS) -> list[str]:
    """`file: module` for each import of a `test_*` module under `root`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent)
        package = ".".join(rel.parent.parts)
        for module in imported_modules(ast.parse(path.read_text()), package):
            if module.split(".")[-1].startswith("test_") and module.split(".")[0] == root.name:
                found.append(f"{rel.as_posix()}: {module}")
    return found


def test_no_module_imports_a_test_module() -> None:
    assert imports_of_test_modules() == []


def test_the_walk_finds_every_spelling_of_a_test_module_import(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    (tests / "gate").mkdir(parents=True)
    top = tests.name  # spelled apart, so a grep for such imports finds none in this file
    (tests / "gate" / "test_a.py").write_text(
        f"from {top}.gate.test_b import HELPER\n"
        f"from {top}.gate import test_c\n"
        f"import {top}.test_d\n"
        "from . import test_e\n"
        "from .test_f import x\n"
        f"def test_g():\n    from {top}.support.tui import wait_for\n    from {top}.test_h import y\n"
    )
    (tests / "support.py").write_text("from gatetui.gate.reports.junit import parse_junit\nimport test_elsewhere\n")
    assert imports_of_test_modules(tests) == [
        "tests/gate/test_a.py: tests.gate.test_b",
        "tests/gate/test_a.py: tests.gate.test_c",
        "tests/gate/test_a.py: tests.test_d",
        "tests/gate/test_a.py: tests.gate.test_e",
        "tests/gate/test_a.py: tests.gate.test_f",
        "tests/gate/test_a.py: tests.test_h",
    ]


def test_every_folder_of_tests_mirrors_one_of_the_package_or_is_named_apart() -> None:
    folders = {
        p.relative_to(TESTS).as_posix()
        for p in TESTS.rglob("*")
        if p.is_dir() and "__pycache__" not in p.parts and "__snapshots__" not in p.parts
    }
    mirrored = {f for f in folders if f.split("/")[0] not in APART}
    assert {f for f in mirrored if not (PACKAGE / f).is_dir()} == set()
    assert {"gate", "gate/phases", "stacks/python", "backends", "supervise", "tui", "cli"} <= mirrored


def test_every_folder_holding_tests_is_a_package_so_equal_names_import_apart() -> None:
    folders = {p.parent for p in TESTS.rglob("test_*.py")}
    assert sorted(f.relative_to(TESTS).as_posix() for f in folders if not (f / "__init__.py").exists()) == []


def test_helpers_live_in_support_and_test_modules_hold_tests() -> None:
    """A module in tests/ is a test module, conftest.py, a package's
    `__init__.py`, or in one of the folders that hold what tests share."""
    shared = {"support", "runtime_emulator", "fixtures"}
    strays = [
        p.relative_to(TESTS).as_posix()
        for p in TESTS.rglob("*.py")
        if not p.name.startswith("test_")
        and p.name not in ("conftest.py", "__init__.py")
        and not shared & set(p.relative_to(TESTS).parts)
    ]
    assert strays == []
    empty = [
        p.relative_to(TESTS).as_posix()
        for p in TESTS.rglob("test_*.py")
        if not shared & set(p.relative_to(TESTS).parts)
        and not any(
            isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test_")
            for n in ast.walk(ast.parse(p.read_text()))
        )
    ]
    assert empty == []
