"""Which folders and modules of head's tree setuptools puts in the wheel,
read from its configuration as data (project_code.py asks, for `covered`
and `bites`).

setup.py is code, and head's: it runs in the install's sandbox, never here.
So only what it says as literals is read (`packages=[...]`,
`py_modules=[...]`, `package_dir={...}`, `find_packages(...)` with literal
arguments); anything else it passes makes the answer unknown (None), and the
gate judges every code file, as it did before it read any configuration.
What no file declares, setuptools finds itself (its automatic discovery,
since 61.0): everything under `src/`, else the flat layout's top-level
packages and modules but for the names its finders leave out.
"""

from __future__ import annotations

import ast
import configparser
import fnmatch
from dataclasses import dataclass, field
from typing import Any

from gatetui.git.snapshot import Snapshot
from gatetui.pyparse import parse_python

# setuptools.discovery.FlatLayoutPackageFinder.DEFAULT_EXCLUDE and
# FlatLayoutModuleFinder.DEFAULT_EXCLUDE (setuptools 75), top-level names only.
FLAT_PACKAGE_EXCLUDE = (
    "ci",
    "bin",
    "debian",
    "doc",
    "docs",
    "documentation",
    "manpages",
    "news",
    "newsfragments",
    "changelog",
    "test",
    "tests",
    "unit_test",
    "unit_tests",
    "example",
    "examples",
    "scripts",
    "tools",
    "util",
    "utils",
    "python",
    "build",
    "dist",
    "venv",
    "env",
    "requirements",
    "tasks",
    "fabfile",
    "site_scons",
    "benchmark",
    "benchmarks",
    "exercise",
    "exercises",
    "htmlcov",
    "[._]*",
)
FLAT_MODULE_EXCLUDE = (
    "setup",
    "conftest",
    "test",
    "tests",
    "example",
    "examples",
    "build",
    "toxfile",
    "noxfile",
    "pavement",
    "dodo",
    "tasks",
    "fabfile",
    "[Ss][Cc]onstruct",
    "conanfile",
    "manage",
    "benchmark",
    "benchmarks",
    "exercise",
    "exercises",
    "[._]*",
)
FINDERS = {"find_packages": False, "find_namespace_packages": True}  # name: whether it finds namespaces


class Unreadable(Exception):
    """setup.py passes something that is no literal: what ships is not known here."""


@dataclass(frozen=True)
class Find:
    """A `find:` of packages: top-level folders under `where` that match."""

    where: str = "."
    include: tuple[str, ...] = ("*",)
    exclude: tuple[str, ...] = ()
    namespaces: bool = False


@dataclass
class Declared:
    packages: list[str] | Find | None = None
    modules: list[str] | None = None
    package_dir: dict[str, str] = field(default_factory=dict)


def setuptools_roots(head: Snapshot, pyproject: dict[str, Any]) -> list[str] | None:
    """The tree paths (folders, module files) setuptools ships; None when
    setup.py says it in code."""
    try:
        declared = _declared(head, pyproject)
    except (Unreadable, configparser.Error):
        return None
    if declared.packages is None and declared.modules is None:
        return discovered(head, declared.package_dir)
    base = declared.package_dir.get("", "")
    roots = [_join(base, name.replace(".", "/") + ".py") for name in declared.modules or []]
    if isinstance(declared.packages, Find):
        return roots + found(head, declared.packages)
    tops = {name.split(".")[0] for name in declared.packages or []}
    return roots + [declared.package_dir.get(top, _join(base, top)) for top in sorted(tops)]


def _declared(head: Snapshot, pyproject: dict[str, Any]) -> Declared:
    """What setup.cfg, pyproject.toml and setup.py declare, the later winning."""
    out = Declared()
    for source in (_from_setup_cfg(head), _from_pyproject(pyproject), _from_setup_py(head)):
        out.packages = source.packages if source.packages is not None else out.packages
        out.modules = source.modules if source.modules is not None else out.modules
        out.package_dir = source.package_dir or out.package_dir
    return out


def _from_pyproject(pyproject: dict[str, Any]) -> Declared:
    settings = table(pyproject, "tool", "setuptools")
    packages, modules = settings.get("packages"), settings.get("py-modules")
    if isinstance(packages, dict) and isinstance(packages.get("find"), dict):
        find = table(packages, "find")
        packages = Find(
            _one(find.get("where"), "."),
            strings(find.get("include")) or ("*",),
            strings(find.get("exclude")) or (),
            bool(find.get("namespaces", True)),
        )
    return Declared(
        _names(packages) if not isinstance(packages, Find) else packages,
        _names(modules),
        _dirs(settings.get("package-dir")),
    )


def _from_setup_cfg(head: Snapshot) -> Declared:
    text = head.text("setup.cfg")
    if text is None:
        return Declared()
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read_string(text)
    options = dict(parser["options"]) if parser.has_section("options") else {}
    packages: list[str] | Find | None = _listed(options.get("packages"))
    raw = (options.get("packages") or "").strip()
    if raw in ("find:", "find_namespace:"):
        find = dict(parser["options.packages.find"]) if parser.has_section("options.packages.find") else {}
        packages = Find(
            find.get("where", ".").strip() or ".",
            tuple(_listed(find.get("include")) or ("*",)),
            tuple(_listed(find.get("exclude")) or ()),
            raw == "find_namespace:",
        )
    dirs = {
        key.strip(): value.strip()
        for line in (options.get("package_dir") or "").splitlines()
        if "=" in line
        for key, _, value in [line.partition("=")]
    }
    return Declared(packages, _listed(options.get("py_modules")), _dirs(dirs))


def _from_setup_py(head: Snapshot) -> Declared:
    """The literal arguments of setup.py's `setup(...)` call."""
    text = head.text("setup.py")
    tree = parse_python(text) if text is not None else None
    if text is None:
        return Declared()
    calls = (
        [node for node in ast.walk(tree) if isinstance(node, ast.Call) and _called(node) == "setup"]
        if tree is not None
        else []
    )
    if len(calls) != 1:
        raise Unreadable("setup.py")
    keywords = {k.arg: k.value for k in calls[0].keywords}
    if None in keywords and not {"packages", "py_modules"} & set(keywords):
        raise Unreadable("setup(**...)")
    packages = keywords.get("packages")
    find = _finder(packages) if isinstance(packages, ast.Call) else None
    return Declared(
        find or _literal_names(packages),
        _literal_names(keywords.get("py_modules")),
        _dirs(_literal(keywords.get("package_dir")) or {}),
    )


def _finder(call: ast.Call) -> Find:
    namespaces = FINDERS.get(_called(call))
    if namespaces is None:
        raise Unreadable("packages=")
    args = dict(zip(("where", "exclude", "include"), (_literal(a) for a in call.args)))
    args.update({k.arg: _literal(k.value) for k in call.keywords if k.arg})
    return Find(
        _one(args.get("where"), "."),
        strings(args.get("include")) or ("*",),
        strings(args.get("exclude")) or (),
        namespaces,
    )


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _literal(node: ast.expr | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise Unreadable("a setup() argument") from None


def _literal_names(node: ast.expr | None) -> list[str] | None:
    value = _literal(node)
    if value is not None and not _names(value):
        raise Unreadable("a setup() argument")
    return _names(value)


def table(value: object, *keys: str) -> dict[str, Any]:
    """The table at `keys` in parsed TOML (head's: any key may hold any
    type), empty where there is none."""
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def strings(value: object) -> tuple[str, ...] | None:
    """A string or a list of strings as a tuple; None for anything else."""
    if isinstance(value, str):
        return (value,)
    names = _names(value)
    return tuple(names) if names is not None else None


def _names(value: object) -> list[str] | None:
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return [str(v) for v in value]
    return None


def _dirs(value: object) -> dict[str, str]:
    return {str(k): str(v).strip("/") for k, v in value.items()} if isinstance(value, dict) else {}


def _listed(value: str | None) -> list[str] | None:
    """An ini list: comma or line separated; a `find:` directive is none."""
    if value is None or value.strip().endswith(":"):
        return None
    return [item.strip() for line in value.splitlines() for item in line.split(",") if item.strip()]


def _one(value: object, default: str) -> str:
    if isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else default


def found(head: Snapshot, find: Find) -> list[str]:
    """The top-level packages a `find:` finds."""
    where = find.where.strip("/") if find.where.strip("/") not in ("", ".") else ""
    folders, _ = top_level(head, where)
    return [
        _join(where, top)
        for top in sorted(folders)
        if (find.namespaces or _join(where, f"{top}/__init__.py") in head)
        and any(fnmatch.fnmatchcase(top, p.split(".")[0]) for p in find.include)
        and not any(fnmatch.fnmatchcase(top, p) for p in find.exclude)
    ]


def discovered(head: Snapshot, package_dir: dict[str, str]) -> list[str]:
    """setuptools' automatic discovery: all of `src/` (or the folder
    package_dir maps the root to), else the flat layout's top level."""
    src = package_dir.get("", "src")
    if src not in ("", ".") and head.has_dir(src):
        folders, modules = top_level(head, src)
        return [_join(src, name) for name in sorted(folders)] + [_join(src, f"{m}.py") for m in sorted(modules)]
    folders, modules = top_level(head, "")
    return [name for name in sorted(folders) if not _excluded(name, FLAT_PACKAGE_EXCLUDE)] + [
        f"{m}.py" for m in sorted(modules) if not _excluded(m, FLAT_MODULE_EXCLUDE)
    ]


def top_level(head: Snapshot, folder: str) -> tuple[set[str], set[str]]:
    """The importable names directly in `folder`: sub-folders that hold
    python somewhere, and modules."""
    prefix = f"{folder}/" if folder else ""
    folders: set[str] = set()
    modules: set[str] = set()
    for path in head.paths:
        if path.startswith(prefix) and path.endswith(".py"):
            first, slash, _ = path[len(prefix) :].partition("/")
            (folders if slash else modules).add(first if slash else first[:-3])
    return {f for f in folders if f.isidentifier()}, {m for m in modules if m.isidentifier()}


def _excluded(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _join(folder: str, name: str) -> str:
    folder = folder.strip("/")
    return name if folder in ("", ".") else f"{folder}/{name}"
