"""A pytest plugin that loads the runner's plugins the gate names, and no other.

Every test run starts pytest with autoloading off: pytest would otherwise
register the `pytest11` entry points of every distribution it finds on
sys.path, where the tree lies too (package metadata committed at its root
or under `src/` is a plugin of every run, base's tests and the hidden tests
included). The gate writes this module into the run's own folder (at the
tree's root) under a name drawn per gate, with NAMES set below it: the
entry points of the distributions the environment check verified
(plugins_loaded.py). Loaded first with `-p`, it registers them by name as
autoloading would have (a name the project's settings block, `-p no:NAME`,
stays blocked, and one blocked after this stays out), looked up with the
tree's folders off sys.path.

The gate's own plugins of the run (named with `-p` in PYTEST_ADDOPTS, their
modules beside this one) are imported here as modules: a `-p` name is
looked up among entry points first, and an entry point of that name in
the tree's metadata would have been registered in their place. It imports
nothing but the standard library.
"""

from __future__ import annotations

import importlib.metadata
import os
import shlex
import sys
from typing import Any

NAMES: tuple[str, ...] = ()  # set by the gate, below
ENVIRONMENT: tuple[str, ...] = ()  # the environment's folders in the tree, set by the gate


def pytest_addhooks(pluginmanager: Any) -> None:
    """Called as this module is registered, before any other `-p` after it
    is read and before the point where pytest would have autoloaded."""
    here = os.path.dirname(os.path.abspath(__file__))
    for module in gate_modules(os.environ.get("PYTEST_ADDOPTS", ""), here):
        if not pluginmanager.is_blocked(module) and pluginmanager.get_plugin(module) is None:
            pluginmanager.import_plugin(module)  # consider_entry_points left off: the module, never a namesake
    kept = list(sys.path)
    verified = [entry for entry in kept if not in_tree(entry, os.path.dirname(here))]
    for dist in importlib.metadata.distributions(path=verified):
        for entry_point in dist.entry_points:
            if (
                entry_point.group == "pytest11"
                and entry_point.name in NAMES
                and not pluginmanager.is_blocked(entry_point.name)
            ):
                entry_point.load()  # imported with the whole sys.path (a plugin may keep a copy of it)
    sys.path[:] = verified
    try:  # pluggy meets only the environment's distributions: a namesake in the tree comes first nowhere
        for name in NAMES:
            pluginmanager.load_setuptools_entrypoints("pytest11", name=name)
    finally:
        sys.path[:] = kept


def in_tree(entry: str, tree: str) -> bool:
    """Whether a sys.path entry lies in the tree (as named or as it
    resolves), outside the environment's folders: package metadata there
    is the tree's, never a verified distribution's (pytest's `pythonpath`
    setting puts the root first, a src layout's editable install adds `src`)."""
    inside = False
    for path in {os.path.abspath(entry or os.curdir), os.path.realpath(entry or os.curdir)}:
        for root in {os.path.abspath(tree), os.path.realpath(tree)}:
            if path == root or path.startswith(root + os.sep):
                inside = inside or not any(
                    path == os.path.join(root, folder) or path.startswith(os.path.join(root, folder) + os.sep)
                    for folder in ENVIRONMENT
                )
    return inside


def gate_modules(addopts: str, here: str) -> list[str]:
    """The `-p` names in `addopts` whose modules lie beside this one."""
    try:
        words = shlex.split(addopts)
    except ValueError:
        return []
    named = [b for a, b in zip(words, words[1:]) if a == "-p"]
    named += [w[2:] for w in words if w.startswith("-p") and w != "-p"]
    return [name for name in named if name.isidentifier() and os.path.isfile(os.path.join(here, name + ".py"))]
