"""Head's own requirements as its pyproject.toml declares them, as METADATA.

The resolve starts from head's installed project (own_stub.py), so it
waited for head's build, and the dependency layer waited for the resolve.
PEP 621 lets it start sooner: a `[project]` field not listed in `dynamic`
is what the build backend must write, so where `dependencies` and
`optional-dependencies` are both static, the gate reads them from the tree
itself (tomllib, the file hostile but only data) and writes the METADATA
the resolve reads: Name, Version, Requires-Dist and Provides-Extra, as
the core metadata spec spells an extra's requirements. The resolve then
runs beside head's build, and the layer is built while head's project
installs. What head declares is head's choice either way: a backend that
writes other requirements than it declared gets the set it declared, and
its own tests say what is missing.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping

NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
EXTRA = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
MAX_LINES, MAX_LINE = 500, 500


def declared_metadata(files: Mapping[str, bytes], version: str = "0") -> tuple[str, str] | None:
    """(project name, METADATA) where pyproject.toml declares the project's
    requirements statically; None where the build decides them (dynamic,
    setup.py alone) or the table is not one the gate can read safely. A
    dynamic version is `version`, the one the gate hands the build (a
    version from git): "0" there let a resolver pick a test runner old
    enough to accept the project at 0 (pluggy 1.6: a pytest of 2014)."""
    project = _project(files.get("pyproject.toml"))
    if project is None:
        return None
    name, dynamic = project.get("name"), project.get("dynamic", [])
    if not isinstance(name, str) or not NAME.fullmatch(name) or not isinstance(dynamic, list):
        return None
    if {"dependencies", "optional-dependencies"} & {str(d) for d in dynamic}:
        return None
    declared = project.get("version") if "version" not in dynamic else version
    if not isinstance(declared, str) or not re.fullmatch(r"[A-Za-z0-9.+!_-]{1,64}", declared):
        return None
    lines = _lines(project.get("dependencies", []), "")
    extras = project.get("optional-dependencies", {})
    if (
        lines is None
        or not isinstance(extras, dict)
        or not all(isinstance(e, str) and EXTRA.fullmatch(e) for e in extras)
    ):
        return None
    head = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {declared}"]
    for extra, requirements in sorted(extras.items()):
        more = _lines(requirements, extra)
        if more is None:
            return None
        head.append(f"Provides-Extra: {extra}")
        lines += more
    if len(lines) > MAX_LINES:
        return None
    return name, "\n".join([*head, *(f"Requires-Dist: {line}" for line in lines)]) + "\n"


def _project(raw: bytes | None) -> dict[str, object] | None:
    data = pyproject(raw)
    project = data.get("project") if data is not None else None
    return project if isinstance(project, dict) else None


def pyproject(raw: bytes | None) -> dict[str, object] | None:
    """A tree's pyproject.toml as data; None where there is none or it is
    not TOML."""
    if raw is None:
        return None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


def _lines(requirements: object, extra: str) -> list[str] | None:
    """Each requirement as a Requires-Dist value, an extra's with its
    marker joined to `extra == "..."`; None for anything but one-line strings."""
    if not isinstance(requirements, list):
        return None
    out = []
    for requirement in requirements:
        if not isinstance(requirement, str) or len(requirement) > MAX_LINE or not requirement.strip():
            return None
        if "\x00" in requirement or requirement.splitlines() != [requirement]:  # any line break a reader splits at
            return None
        spec, _, marker = requirement.partition(";")
        if not extra:
            out.append(requirement.strip())
        elif marker.strip():
            out.append(f'{spec.strip()} ; ({marker.strip()}) and extra == "{extra}"')
        else:
            out.append(f'{spec.strip()} ; extra == "{extra}"')
    return out
