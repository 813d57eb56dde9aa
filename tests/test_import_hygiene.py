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
