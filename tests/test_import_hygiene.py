"""What a headless module loads when it is imported.

The import contract in pyproject.toml (`lint-imports`, run by `make test`)
holds which module may import which, lazy imports included. It allows the
CLI and the chooser to reach the TUI and the runtime backend inside a
function; this holds the other half: importing any headless module, in a
fresh interpreter, loads neither Textual nor the Runtime SDK. The modules
are found by walking the package, never listed by hand.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import gatetui

# The TUI is Textual (and __main__ starts it); even the runtime backend
# loads the SDK only when it first talks to Runtime.
LOADING = ("gatetui.tui", "gatetui.__main__")
PROBE = """
import importlib, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
    loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'withruntime'))
    if loaded:
        print(name, loaded[:3])
        break
"""


def headless_modules() -> list[str]:
    found = [m.name for m in pkgutil.walk_packages(gatetui.__path__, "gatetui.")]
    return sorted(name for name in found if not name.startswith(LOADING))


def test_the_walk_finds_the_layers() -> None:
    tops = {name.split(".")[1] for name in headless_modules()}
    assert {"agent", "backends", "cli", "config", "errors", "gate", "git", "lab", "stacks", "supervise"} <= tops
    assert len(headless_modules()) > 80


def test_no_headless_module_loads_textual_or_the_runtime_sdk() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *headless_modules()], capture_output=True, text=True, timeout=120
    )
    assert (done.returncode, done.stdout.strip()) == (0, ""), done.stderr[-2000:]
