"""The domain never imports Textual: each headless module, imported in a fresh
interpreter, leaves `textual` out of sys.modules."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import gatetui

HEADLESS = [
    "gatetui.repo", "gatetui.config", "gatetui.stacks.registry", "gatetui.samples",
    "gatetui.gate.runner", "gatetui.gate.plan", "gatetui.gate.diffscan", "gatetui.gate.junit",
    "gatetui.backends.local", "gatetui.backends.isolation", "gatetui.backends.runtime_admission", "gatetui.cli", "gatetui.store",
    "gatetui.history", "gatetui.watch", "gatetui.supervise.supervisor", "gatetui.demo", "gatetui.lab",
    "gatetui.verify", "gatetui.stacks.python.hooks", "gatetui.serve", "gatetui.submit", "gatetui.mirror",
    "gatetui.mcp_server", "gatetui.gate.api", "gatetui.backends.choose",
    "gatetui.backends.local_workspace", "gatetui.backends.local_layout", "gatetui.backends.local_files",
    "gatetui.backends.runtime", "gatetui.backends.runtime_workspace", "gatetui.backends.runtime_forks",
    "gatetui.backends.runtime_pack", "gatetui.backends.closing",
]


@pytest.mark.parametrize("module", HEADLESS)
def test_headless_module_does_not_import_textual(module: str) -> None:
    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'withruntime')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def cli_importers() -> list[str]:
    """Every module of the package whose code imports gatetui.cli (at any depth of the file)."""
    root = Path(gatetui.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [f"{node.module}.{a.name}" for a in node.names] if isinstance(node, ast.ImportFrom) else [])
            if any(name == "gatetui.cli" or name.startswith("gatetui.cli.") for name in names):
                found.append(path.relative_to(root.parent).as_posix())
    return found


def test_only_the_entry_point_imports_the_cli() -> None:
    """Imports flow one way: the commands are built from the rest, never the rest from the commands
    (the console script names gatetui.cli:entry in pyproject.toml)."""
    assert sorted(set(cli_importers())) == ["gatetui/__main__.py"]


def imported_by(path: Path) -> set[str]:
    """The top-level packages a module's code imports, at any depth of the file."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def test_only_the_runtime_modules_import_the_sdk_and_no_backend_imports_textual() -> None:
    """The local fallback never needs `withruntime`; a lazy import inside a
    function counts as well, since it runs when the function does."""
    folder = Path(gatetui.__file__).parent / "backends"
    seen = {path.name: imported_by(path) for path in sorted(folder.glob("*.py"))}
    assert {"local.py", "local_workspace.py", "runtime.py", "runtime_family.py"} <= set(seen)
    importers = sorted(name for name, packages in seen.items() if "withruntime" in packages)
    assert "runtime_family.py" in importers  # its sdk(): the one way in today
    assert [name for name in importers if not name.startswith("runtime")] == []
    assert sorted(name for name, packages in seen.items() if "textual" in packages) == []
