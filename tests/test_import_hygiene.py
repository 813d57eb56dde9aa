"""The domain never imports Textual: each headless module, imported in a fresh
interpreter, leaves `textual` out of sys.modules."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEADLESS = [
    "gatetui.repo", "gatetui.config", "gatetui.stacks.registry", "gatetui.samples",
    "gatetui.gate.runner", "gatetui.gate.plan", "gatetui.gate.diffscan", "gatetui.gate.junit",
    "gatetui.backends.local", "gatetui.backends.isolation", "gatetui.backends.runtime_admission", "gatetui.cli", "gatetui.store",
    "gatetui.history", "gatetui.watch", "gatetui.supervisor", "gatetui.demo", "gatetui.lab",
    "gatetui.verify", "gatetui.stacks.python.hooks", "gatetui.serve", "gatetui.submit", "gatetui.mirror",
    "gatetui.mcp_server",
]


@pytest.mark.parametrize("module", HEADLESS)
def test_headless_module_does_not_import_textual(module: str) -> None:
    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'withruntime')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
