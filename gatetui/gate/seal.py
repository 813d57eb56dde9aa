"""Sealed paths: what `old_tests` puts back, and the digests that name them.

A sealed path is a file the agent may not silently change: base's version is
restored over head's for the `old_tests` run, and the digest of the set at
base and at head says whether anything sealed moved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from gatetui.gate.digests import Digests
from gatetui.repo import digest_files
from gatetui.snapshot import Snapshot

MANIFESTS = re.compile(
    r"^(pyproject\.toml|setup\.py|setup\.cfg|requirements[^/]*\.txt|requirements/[^/]+\.txt"
    r"|package\.json|package-lock\.json|npm-shrinkwrap\.json|tox\.ini)$"
)
JUDGE_FILES = ("gatetui.toml", "Makefile", "tox.ini", "pytest.ini", ".pytest.ini", "noxfile.py")


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """`**/` any folders, `**` anything, `*` within a name; a plain path also
    matches everything under it, so `tests` seals the whole folder."""
    if not re.search(r"[*?\[]", pattern):
        return re.compile(re.escape(pattern.rstrip("/")) + r"(/.*)?$")
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + "$")


@lru_cache(maxsize=64)
def _globs_regex(globs: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{_glob_regex(g).pattern})" for g in globs) or r"(?!)")


def is_sealed(path: str, globs: Iterable[str]) -> bool:
    return _globs_regex(tuple(globs)).match(path) is not None


def sealed_paths(snapshot: Snapshot, globs: tuple[str, ...]) -> list[str]:
    return [p for p in snapshot.paths if is_sealed(p, globs)]


def sealed_digest(snapshot: Snapshot, globs: tuple[str, ...]) -> str:
    """Names the sealed set by its files' content ids, without reading them."""
    return digest_files({p: snapshot.ident(p).encode() for p in sealed_paths(snapshot, globs)})


def overlay(base: Snapshot, head: Snapshot, globs: tuple[str, ...]) -> dict[str, bytes | None]:
    """What to write over head's tree to make its sealed paths base's again:
    changed files reverted, deleted ones restored (bytes), added ones removed (None).
    Only the files that differ are read."""
    at_base = {p: base.ident(p) for p in sealed_paths(base, globs)}
    at_head = {p: head.ident(p) for p in sealed_paths(head, globs)}
    out: dict[str, bytes | None] = {
        p: base.read(p) or b"" for p, ident in at_base.items() if at_head.get(p) != ident
    }
    out.update({p: None for p in at_head if p not in at_base})
    return out


def changed_sealed(base: Snapshot, head: Snapshot, globs: tuple[str, ...]) -> list[str]:
    return sorted(overlay(base, head, globs))


def judge_changes(base: Snapshot, head: Snapshot) -> list[str]:
    """The parts of how a change is judged that head changed (and that the
    gate ignored, since it reads them from base)."""
    names = [f for f in (*JUDGE_FILES, *_configs(base, head)) if base.read(f) != head.read(f)]
    for label, extract in _SECTIONS.items():
        if extract(base) != extract(head):
            names.append(label)
    return sorted(set(names))


def _configs(base: Snapshot, head: Snapshot) -> set[str]:
    pattern = re.compile(r"(vitest|vite)\.config\.[cm]?[jt]s$")
    return {p for p in (*base.paths, *head.paths) if pattern.match(p)}


def _toml_section(path: str, *keys: str):  # type: ignore[no-untyped-def]
    import tomllib

    def extract(snapshot: Snapshot) -> object:
        try:
            node: object = tomllib.loads(snapshot.text(path) or "")
        except tomllib.TOMLDecodeError:
            return "<invalid TOML>"
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        return node

    return extract


def _ini_section(path: str, section: str):  # type: ignore[no-untyped-def]
    import configparser

    def extract(snapshot: Snapshot) -> object:
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read_string(snapshot.text(path) or "")
        except configparser.Error:
            return "<invalid ini>"
        return dict(parser[section]) if parser.has_section(section) else None

    return extract


def _package_test_script(snapshot: Snapshot) -> object:
    try:
        data = json.loads(snapshot.text("package.json") or "{}")
    except json.JSONDecodeError:
        return "<invalid JSON>"
    scripts = data.get("scripts") if isinstance(data, dict) else None
    return scripts.get("test") if isinstance(scripts, dict) else None


_SECTIONS = {
    "pyproject.toml#tool.gatetui": _toml_section("pyproject.toml", "tool", "gatetui"),
    "pyproject.toml#tool.pytest.ini_options": _toml_section("pyproject.toml", "tool", "pytest", "ini_options"),
    "setup.cfg#tool:pytest": _ini_section("setup.cfg", "tool:pytest"),
    "package.json#scripts.test": _package_test_script,
}


def compute_digests(base: Snapshot, head: Snapshot, globs: tuple[str, ...]) -> Digests:
    manifests = {p: head.read(p) or b"" for p in head.paths if MANIFESTS.match(p)}
    return Digests(
        base=base.sha,
        head=head.sha,
        sealed_base=sealed_digest(base, globs),
        sealed_head=sealed_digest(head, globs),
        sealed_changed=tuple(changed_sealed(base, head, globs)),
        manifest=digest_files(manifests),
        manifest_files=tuple(sorted(manifests)),
        judge_changed=tuple(judge_changes(base, head)),
    )
