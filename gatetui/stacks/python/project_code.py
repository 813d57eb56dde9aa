"""Head's importable code: the packages and modules its distribution ships.

`covered` and `bites` judge library lines, and a library line is one a
user's program can run: a line of a module the installed project holds.
A Sphinx `conf.py`, an `examples/` folder or a benchmark script beside the
package is no such line, and no test is expected to run it. So the python
stack reads which top-level folders and modules head's build backend puts
in the wheel, from head's packaging configuration read as data (flit,
hatchling, poetry, pdm-backend and setuptools, each the way its own
documentation says it finds them). Whatever cannot be read so (a setup.py
that computes its arguments, another backend that names nothing the tree
holds) answers None: every code file is judged, as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gatetui.config import ConfigError, parse_toml
from gatetui.git.snapshot import Snapshot
from gatetui.stacks.python.setuptools_code import discovered, setuptools_roots, table

GLOB = re.compile(r"[*?\[]")
FOLDERS = ("", "src/")  # where flit, hatchling and poetry look for the project's module


def shipped_code(head: Snapshot) -> Callable[[str], bool] | None:
    """Whether a tree path is a module head's distribution ships; None
    when what it ships is not known from its configuration."""
    roots = project_roots(head)
    if not roots:
        return None
    files, folders = frozenset(roots), tuple(f"{root}/" for root in roots)
    return lambda path: path in files or path.startswith(folders)


def project_roots(head: Snapshot) -> tuple[str, ...]:
    """The top-level folders and module files the wheel is built from, each
    as head holds it (empty: not known)."""
    try:
        pyproject = parse_toml(head, "pyproject.toml") or {}
    except ConfigError:
        return ()
    backend = table(pyproject, "build-system").get("build-backend")
    backend = backend if isinstance(backend, str) else "setuptools"
    reader = next((read for prefix, read in READERS if backend.startswith(prefix)), _by_name)
    roots = reader(head, table(pyproject, "tool"), _project_name(pyproject)) or []
    return tuple(sorted({root for root in roots if root in head or head.has_dir(root)}))


def _project_name(pyproject: dict[str, Any]) -> str:
    name = table(pyproject, "project").get("name") or table(pyproject, "tool", "poetry").get("name")
    return name if isinstance(name, str) else ""


Roots = list[str] | None


def _flit(head: Snapshot, tool: dict[str, Any], name: str) -> Roots:
    """flit_core: `[tool.flit.module] name` (older flit's `[tool.flit.metadata]
    module`), else the project's name with `-` as `_`, as a package or a
    module, at the top or under src/."""
    module = table(tool, "flit", "module").get("name") or table(tool, "flit", "metadata").get("module")
    return _module(head, module if isinstance(module, str) else name.replace("-", "_"))


def _hatch(head: Snapshot, tool: dict[str, Any], name: str) -> Roots:
    """hatchling's wheel: the `packages` or `only-include` it names (of
    the wheel target, else of the build), simple `include` paths, else the
    project's name (its default file selection)."""
    build = table(tool, "hatch", "build")
    wheel = table(build, "targets", "wheel")
    for settings in (wheel, build):
        for key in ("packages", "only-include", "include"):
            if settings.get(key):
                return _paths(settings[key])
    normal = re.sub(r"[^\w.]+", "_", name)
    return _module(head, normal) or [f"{top}/{normal}" for top in _tops(head) if f"{top}/{normal}/__init__.py" in head]


def _poetry(head: Snapshot, tool: dict[str, Any], name: str) -> Roots:
    """poetry-core: `packages = [{include, from}]`, else the project's name."""
    packages = table(tool, "poetry").get("packages")
    if not packages:
        return _module(head, re.sub(r"[-.]+", "_", name).lower())
    if not isinstance(packages, list) or not all(
        isinstance(p, dict) and isinstance(p.get("include"), str) and isinstance(p.get("from", ""), str)
        for p in packages
    ):
        return None
    return _paths([f"{p.get('from') or ''}/{p['include']}".strip("/") for p in packages])


def _pdm(head: Snapshot, tool: dict[str, Any], name: str) -> Roots:
    """pdm-backend: the `includes` it names, else what it finds in its
    package-dir (src/ where there is one) or at the top."""
    settings = table(tool, "pdm", "build")
    if settings.get("includes"):
        return _paths(settings["includes"])
    folder = settings.get("package-dir")
    return discovered(head, {"": folder} if isinstance(folder, str) else {})


def _setuptools(head: Snapshot, tool: dict[str, Any], name: str) -> Roots:
    return setuptools_roots(head, {"tool": tool})


def _by_name(head: Snapshot, tool: dict[str, Any], name: str) -> Roots:
    """Any other backend: the project's name, where a module of it stands."""
    return _module(head, re.sub(r"[-.]+", "_", name)) if name else None


READERS: tuple[tuple[str, Callable[[Snapshot, dict[str, Any], str], Roots]], ...] = (
    ("flit_core", _flit),
    ("flit.", _flit),
    ("hatchling", _hatch),
    ("poetry", _poetry),
    ("pdm.backend", _pdm),
    ("pdm.pep517", _pdm),
    ("setuptools", _setuptools),
)


def _module(head: Snapshot, name: str) -> Roots:
    """The package or module `name` (dotted for a namespace's), at the top or under src/."""
    path = name.replace(".", "/")
    for folder in FOLDERS:
        if f"{folder}{path}/__init__.py" in head:
            return [f"{folder}{path}"]
        if f"{folder}{path}.py" in head:
            return [f"{folder}{path}.py"]
    return None


def _paths(value: object) -> Roots:
    """Tree paths a backend's configuration names, up to their first glob."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    roots = [GLOB.split(v, 1)[0].strip("/").removeprefix("./").rstrip("/") for v in value]
    return None if "" in roots else roots


def _tops(head: Snapshot) -> list[str]:
    return sorted({path.split("/", 1)[0] for path in head.paths if "/" in path})
