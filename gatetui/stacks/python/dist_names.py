"""Distributions installed twice under one name, in what a run sees.

A run imports from the gate's venv and, after it, the dependency layer.
Two distributions of one name there (PEP 503, as the index compares names)
mean one shadows the other, whichever sys.path meets first: a release of
head's own project in the layer put its code before head's tree, and the
new tests ran against the old release (click 8.1.7 to 8.1.8 in make eval). No
resolve gives one name twice, so this is always a bug of the install's,
and the environment check refuses it rather than let a run guess.

Bundled into the environment check's script (scripts.py): stdlib only.
"""

from __future__ import annotations

import os
import re


def dist_infos(site: str) -> list[tuple[str, str]]:
    """(canonical name, the folder) of each `*.dist-info` folder in `site`."""
    found = []
    for name in sorted(os.listdir(site)) if os.path.isdir(site) else ():
        if name.endswith(".dist-info") and not os.path.islink(os.path.join(site, name)):
            project = name.removesuffix(".dist-info").rpartition("-")[0] or name.removesuffix(".dist-info")
            found.append((re.sub(r"[-_.]+", "-", project).lower(), name))
    return found


def installed_twice(sites: list[tuple[str, str]]) -> list[str]:
    """Each name installed more than once in `sites` ((site, how to call
    it) in the order a run's sys.path meets them), said with every copy:
    `click (click-8.1.8.dist-info in .venv, click-8.1.7.dist-info in the
    dependency layer)`."""
    seen: dict[str, list[str]] = {}
    for site, called in sites:
        for name, folder in dist_infos(site):
            seen.setdefault(name, []).append(f"{folder} in {called}")
    return [f"{name} ({', '.join(where)})" for name, where in sorted(seen.items()) if len(where) > 1]
