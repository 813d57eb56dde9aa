"""The optional dependencies ("extras") a Python project declares, wherever
it declares them: pyproject.toml's `[project.optional-dependencies]`,
setup.cfg's `[options.extras_require]`, or setup.py's `extras_require=`.

A setuptools project that keeps its test extra in setup.cfg or setup.py is
still common; missing it installs the project without its test tools, and
every run then fails for a reason that is not the change. setup.py is read,
never run (running base's setup.py would execute its code in the
supervisor): a literal dict, or a module-level name bound to one, is
understood; anything computed is not, and the install falls back to the
other sources.
"""

from __future__ import annotations

import ast
import configparser
from typing import Any

from gatetui.git.snapshot import Snapshot
from gatetui.pyparse import parse_python

SETUP_PY_BYTES = 200_000  # a setup.py bigger than this is not read


def declared_extras(base: Snapshot, pyproject: dict[str, Any]) -> dict[str, list[str]]:
    """Extra name -> requirements; pyproject.toml wins over setup.cfg over setup.py."""
    found: dict[str, list[str]] = {}
    for source in (
        setup_py_extras(base.text("setup.py") or ""),
        setup_cfg_extras(base.text("setup.cfg") or ""),
        _pyproject_extras(pyproject),
    ):
        found.update(source)
    return found


def _pyproject_extras(project: dict[str, Any]) -> dict[str, list[str]]:
    table = project.get("optional-dependencies")
    if not isinstance(table, dict):
        return {}
    return {str(k): [str(r) for r in v] for k, v in table.items() if isinstance(v, list)}


def setup_cfg_extras(text: str) -> dict[str, list[str]]:
    """`[options.extras_require]`: one requirement per line (or `;`-free
    comma lists on one line, as older projects write them)."""
    parser = configparser.ConfigParser(interpolation=None, strict=False, delimiters=("=",))
    try:
        parser.read_string(text)
    except configparser.Error:
        return {}
    if not parser.has_section("options.extras_require"):
        return {}
    return {name: _requirement_lines(value) for name, value in parser.items("options.extras_require")}


def _requirement_lines(value: str) -> list[str]:
    lines = [line.split("#", 1)[0].strip() for line in value.splitlines()]
    if len([line for line in lines if line]) == 1 and "," in lines[-1] and ";" not in lines[-1]:
        lines = lines[-1].split(",")
    return [line.strip() for line in lines if line.strip()]


def setup_py_extras(text: str) -> dict[str, list[str]]:
    """`setup(extras_require=...)` when it is a literal dict, or a name bound
    to one at module level; {} for anything else."""
    if not text or len(text) > SETUP_PY_BYTES:
        return {}
    tree = parse_python(text)
    if tree is None:
        return {}
    bound = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "extras_require":
                    value = bound.get(keyword.value.id) if isinstance(keyword.value, ast.Name) else keyword.value
                    return _literal_extras(value)
    return {}


def _literal_extras(node: ast.AST | None) -> dict[str, list[str]]:
    try:
        value = ast.literal_eval(node) if node is not None else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return {}
    if not isinstance(value, dict):
        return {}
    extras: dict[str, list[str]] = {}
    for name, reqs in value.items():
        if isinstance(name, str) and isinstance(reqs, (list, tuple)) and all(isinstance(r, str) for r in reqs):
            extras[name] = list(reqs)
        elif isinstance(name, str) and isinstance(reqs, str):
            extras[name] = [reqs]
    return extras
