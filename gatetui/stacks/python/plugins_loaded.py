"""Which runner plugins a python test run loads: exactly those the
environment check found in distributions it verified, named one by one.

pytest's autoloading registers the `pytest11` entry points of whatever
importlib.metadata finds on sys.path, and a run's sys.path holds the tree
(its root, `src/` through the editable install): package metadata committed
there, in any letter case or behind a symlink, would be a plugin of every
run. So every run, a custom test command's pytest included (PYTEST_ADDOPTS),
starts pytest with autoloading off and loads the gate's loader
(pytest_named_plugins.py), which names the verified distributions' plugins.
Head's own project (installed from the tree) is no index's: its plugins
load only where base's project declared them too (a project that is
itself a pytest plugin); a plugin head adds is named by the diff rule
(hooks.py) and loads nowhere.

pytest >= 8.4 takes the switch as an option, `--disable-plugin-autoload`;
older ones read PYTEST_DISABLE_PLUGIN_AUTOLOAD, set only for them.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterable
from pathlib import Path

from gatetui.stacks.base import RunPlugin
from gatetui.stacks.offered import Offered

LOADER = (Path(__file__).parent / "pytest_named_plugins.py").read_text()
OPTION_SINCE = (8, 4)  # the first pytest with --disable-plugin-autoload


def python_loads(declared: Iterable[str], environment: tuple[str, ...]) -> Callable[[Offered], RunPlugin]:
    """What every run of an environment loads, given the pytest11 names
    base's own project declares and the environment's folders in the tree."""
    at_base = frozenset(declared)

    def loads(offered: Offered) -> RunPlugin:
        return named_plugins(offered, at_base, f"site_{secrets.token_hex(6)}", environment)

    return loads


def named_plugins(offered: Offered, at_base: frozenset[str], module: str, environment: tuple[str, ...]) -> RunPlugin:
    """The loader as module `module` (a name drawn per gate: no entry point
    in the tree can be its namesake), with the names it loads and the
    folders of the tree it may find them in."""
    names = tuple(dict.fromkeys(p.name for p in offered.plugins if not p.own or p.name in at_base))
    folders = tuple(folder.strip("/") for folder in environment)
    source = f"{LOADER}\nNAMES = {names!r}\nENVIRONMENT = {folders!r}\n"
    env = {"PYTHONPATH": "{folder}"}
    if runner_version(offered.runner) >= OPTION_SINCE:
        env["PYTEST_ADDOPTS"] = f"--disable-plugin-autoload -p {module}"
    else:
        env.update({"PYTEST_ADDOPTS": f"-p {module}", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    return RunPlugin({f"{module}.py": source.encode()}, env)


def runner_version(version: str) -> tuple[int, int]:
    """A release's major and minor numbers; (0, 0) for none."""
    match = re.match(r"(\d+)\.(\d+)", version)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)
