"""The random-order run: which seed, which files, which environment.

With `random_order = true` the third of the three runs loads a small pytest
plugin (pytest_random_order.py, shipped in this package) that shuffles the
collected tests with a seed. The seed is drawn when the run is planned, so
the digest state names it before any test runs, and the same order can be
replayed by passing the seed again (GateRequest.random_seed).
"""

from __future__ import annotations

import secrets
from pathlib import Path

PLUGIN = "gatetui_random_order"
FOLDER = ".gatetui-plugins"  # in the copy only: outside the project's packages
SEED_ENV = "GATETUI_RANDOM_SEED"
RUN_INDEX = 2  # run 3 of 3: runs 1 and 2 keep the suite's own order
RUNNERS = ("pytest",)  # the runners the plugin knows how to shuffle


def draw_seed() -> int:
    return secrets.randbelow(2**31)


def plugin_files(folder: str = FOLDER) -> dict[str, bytes]:
    """The plugin's source, to be written into the copy that runs shuffled
    (the gate passes a folder name drawn per run: head cannot put a module
    of its own in it)."""
    source = (Path(__file__).parent / "pytest_random_order.py").read_bytes()
    return {f"{folder}/{PLUGIN}.py": source}


def plugin_env(workspace_path: str, seed: int, folder: str = FOLDER) -> dict[str, str]:
    """Environment added to the shuffled run: the plugin on PYTHONPATH,
    loaded with -p (PYTEST_ADDOPTS is appended to the profile's own)."""
    return {
        "PYTEST_ADDOPTS": f"-p {PLUGIN}",
        "PYTHONPATH": f"{workspace_path.rstrip('/')}/{folder}",
        SEED_ENV: str(seed),
    }
