"""Sealed paths: what `old_tests` puts back, and the digests that name them.

A sealed path is a file the agent may not silently change: base's version is
restored over head's for the `old_tests` run, and the digest of the set at
base and at head says whether anything sealed moved. Each sealing rule gets
its own digest, where a `FILE#SECTION` entry is hashed by its parsed
content, so an edit elsewhere in the same file is no change.
"""

from __future__ import annotations

import configparser
import hashlib
import json
import re
import tomllib
from collections.abc import Iterable
from pathlib import PurePosixPath

from gatetui.config import SECTION_FORMATS, SealRule, section_keys
from gatetui.gate.sealing.digests import Digests, RuleDigest
from gatetui.git.repo import digest_files
from gatetui.git.snapshot import Snapshot
from gatetui.globs import matches

MANIFESTS = re.compile(
    r"^(pyproject\.toml|setup\.py|setup\.cfg|requirements[^/]*\.txt|requirements/[^/]+\.txt"
    r"|package\.json|package-lock\.json|npm-shrinkwrap\.json|tox\.ini)$"
)
JUDGE_FILES = ("gatetui.toml", "Makefile", "tox.ini", "pytest.ini", ".pytest.ini", "noxfile.py")


def is_sealed(path: str, globs: Iterable[str]) -> bool:
    return matches(path, globs)


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
    out: dict[str, bytes | None] = {p: base.read(p) or b"" for p, ident in at_base.items() if at_head.get(p) != ident}
    out.update({p: None for p in at_head if p not in at_base})
    return out


def changed_sealed(base: Snapshot, head: Snapshot, globs: tuple[str, ...]) -> list[str]:
    return sorted(overlay(base, head, globs))


def judge_changes(base: Snapshot, head: Snapshot) -> list[str]:
    """The parts of how a change is judged that head changed (and that the
    gate ignored, since it reads them from base)."""
    names = [f for f in (*JUDGE_FILES, *_configs(base, head)) if base.read(f) != head.read(f)]
    names += [entry for entry in JUDGE_SECTIONS if section_value(base, entry) != section_value(head, entry)]
    return sorted(set(names))


def _configs(base: Snapshot, head: Snapshot) -> set[str]:
    pattern = re.compile(r"(vitest|vite)\.config\.[cm]?[jt]s$")
    return {p for p in (*base.paths, *head.paths) if pattern.match(p)}


JUDGE_SECTIONS = (
    "pyproject.toml#tool.gatetui",
    "pyproject.toml#tool.pytest.ini_options",
    "setup.cfg#tool:pytest",
    "package.json#scripts.test",
)


def section_value(snapshot: Snapshot, entry: str) -> object:
    """The parsed content of `FILE#SECTION`: a TOML or JSON key path's
    value, an ini section's options; None when the file or the section is
    absent. A file that does not parse is named by its bytes' hash, so any
    edit to it counts as a change."""
    path, _, section = entry.partition("#")
    raw = snapshot.read(path)
    if raw is None:
        return None
    text = raw.decode("utf-8", errors="replace")
    kind = SECTION_FORMATS.get(PurePosixPath(path).suffix)
    try:
        if kind == "ini":
            parser = configparser.ConfigParser(interpolation=None, strict=False)
            parser.read_string(text)
            return dict(parser[section]) if parser.has_section(section) else None
        node: object = tomllib.loads(text) if kind == "toml" else json.loads(text)
    except (configparser.Error, tomllib.TOMLDecodeError, ValueError):
        return {"<unreadable>": hashlib.sha256(raw).hexdigest()}
    for key in section_keys(section):
        node = node.get(key) if isinstance(node, dict) else None
    return node


def section_digest(snapshot: Snapshot, entry: str) -> str:
    """A section named by its parsed content: key order, comments and
    whitespace do not count, nor anything outside it."""
    value = json.dumps(section_value(snapshot, entry), sort_keys=True, default=str)
    return hashlib.sha256(value.encode()).hexdigest()


def rule_digest(base: Snapshot, head: Snapshot, rule: SealRule) -> RuleDigest:
    """One rule at base and at head, and what it counts as changed."""
    at_base = {p: base.ident(p).encode() for p in sealed_paths(base, rule.globs)}
    at_head = {p: head.ident(p).encode() for p in sealed_paths(head, rule.globs)}
    added = sorted(set(at_head) - set(at_base))
    if rule.allow_new:
        at_head = {p: ident for p, ident in at_head.items() if p in at_base}
    changed = [p for p in sorted(at_base.keys() | at_head.keys()) if at_base.get(p) != at_head.get(p)]
    sections_base = {e: section_digest(base, e).encode() for e in rule.sections}
    sections_head = {e: section_digest(head, e).encode() for e in rule.sections}
    changed += [e for e in rule.sections if sections_base[e] != sections_head[e]]
    return RuleDigest(
        name=rule.name,
        on_change=rule.on_change,
        allow_new=rule.allow_new,
        base=digest_files({**at_base, **sections_base}),
        head=digest_files({**at_head, **sections_head}),
        changed=tuple(changed),
        added=tuple(added) if rule.allow_new else (),
    )


def compute_digests(
    base: Snapshot, head: Snapshot, globs: tuple[str, ...], rules: tuple[SealRule, ...] = ()
) -> Digests:
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
        rules=tuple(rule_digest(base, head, rule) for rule in rules),
    )
