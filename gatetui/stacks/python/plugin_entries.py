"""The runner's plugins a checked environment offers: the `pytest11` entry
points of the distributions whose RECORD lists their entry_points.txt.

pytest left to itself registers the `pytest11` entry points of every
distribution importlib.metadata finds on sys.path, and a run's sys.path
holds the tree: a `*.dist-info` or `*.egg-info` folder committed at its root
or under `src/` (in any letter case, or reached through a symlink) would be
a plugin of every run, base's tests and the hidden tests included. So the
runs start with autoloading off, and the gate names the plugins to load
(plugins_loaded.py) from what this finds: only distributions the
environment check verifies, in the venv's site-packages and the dependency
layer's, never a folder of the tree.

Bundled into the environment check's script (scripts.py): stdlib only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Protocol

GROUP = "pytest11"
RUNNER_DIST = "pytest"  # not RUNNER: env_check.py, bundled after this module, has its own


class Listed(Protocol):
    """A RECORD's row as the environment check reads it (env_check.Record)."""

    @property
    def dist(self) -> str: ...  # the dist-info folder's name

    @property
    def own(self) -> bool: ...  # installed from a local folder


def runner_plugins(
    places: list[tuple[list[str], Mapping[str, Listed]]], read_text: Callable[[str], str | None]
) -> tuple[list[dict[str, object]], str]:
    """The runner's plugins the checked distributions offer, site by site
    in the order a run's sys.path meets them (each with what its RECORDs
    list, by normalised path), and the runner's version (the first found)."""
    plugins: list[dict[str, object]] = []
    version = ""
    for sites, records in places:
        own = {record.dist for record in records.values() if record.own}
        for site in sites:
            found, release = offered(site, set(records), own, read_text)
            plugins += found
            version = version or release
    return plugins, version


def entry_point_names(text: str, group: str) -> list[str]:
    """The names of one group of an entry_points.txt, read as
    importlib.metadata reads it (a `[section]` line, then `name = value`)."""
    section, names = None, []
    for line in (raw.strip() for raw in text.splitlines()):
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]").strip()
        elif section == group and "=" in line:
            names.append(line.split("=", 1)[0].strip())
    return names


def offered(
    site: str, listed: set[str], own: set[str], read_text: Callable[[str], str | None]
) -> tuple[list[dict[str, object]], str]:
    """The plugins of `site`'s distributions whose entry_points.txt its
    RECORD lists (`listed`: normalised paths some RECORD names; `own`: the
    dist-info folders installed from a local folder), and the runner's
    version there ("" where it is not installed in `site`)."""
    plugins: list[dict[str, object]] = []
    version = ""
    for name in sorted(os.listdir(site)) if os.path.isdir(site) else ():
        info = os.path.join(site, name)
        if not name.endswith(".dist-info") or os.path.islink(info) or not os.path.isdir(info):
            continue
        project, _, release = name.removesuffix(".dist-info").rpartition("-")
        if (
            re.sub(r"[-_.]+", "-", project).lower() == RUNNER_DIST
            and os.path.normpath(os.path.join(info, "RECORD")) in listed
        ):
            version = release
        entries = os.path.normpath(os.path.join(info, "entry_points.txt"))
        text = read_text(entries) if entries in listed else None
        for plugin in entry_point_names(text or "", GROUP):
            plugins.append({"name": plugin, "dist": project, "own": name in own})
    return plugins, version
