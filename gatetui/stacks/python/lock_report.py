"""Split what uv resolved (a pylock.toml, PEP 751) into what the index vouches for and what is head's.

The same split as pip_report.py, from uv's resolve: `uv pip compile
--format pylock.toml`, started from head's installed project packed as a
metadata-only wheel (own_stub.py). uv resolves in a fraction of pip's time,
and pylock.toml is a standard: parsed with the standard library's TOML
reader, every value checked here, since the file is written in a step where
head's code may run (a local dependency's build). Only names, versions and
sha256 hashes are taken for the index's distributions, never a URL; a pin
lists every file hash the lock names for that version (each wheel and the
sdist), so the pinned install may take whichever file the platform needs
and no other.

`read` takes either report: pip's JSON (where uv is missing, the resolve is
pip's) or this.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from urllib.parse import unquote, urlsplit

from gatetui.stacks.base import ReportProblem, Resolved
from gatetui.stacks.python import pip_report
from gatetui.stacks.python.pip_report import NAME, SHA256, VERSION, canonical

SAID = "uv's resolve"


def read(raw: bytes | None, tree: str, own: str = "") -> Resolved:
    """The resolve's report, pip's (JSON) or uv's (pylock.toml), split.
    `own`: head's project, whose entry in a lock is dropped (its metadata
    wheel, not a distribution to install; a release of it from the index
    is named in `dropped`), and never pinned from pip's report either."""
    text = (raw or b"").lstrip()
    if not text or text.startswith(b"{"):
        return pip_report.split(raw, tree, own)
    return split(raw or b"", tree, own)


def split(raw: bytes, tree: str, own: str) -> Resolved:
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        raise ReportProblem(f"{SAID} wrote no readable lock (pylock.toml)") from None
    packages = data.get("packages", [])
    if not isinstance(packages, list):
        raise ReportProblem(f"{SAID} wrote a lock whose packages are not a list")
    tree = tree.rstrip("/")
    pinned: list[str] = []
    local: list[str] = []
    direct: list[str] = []
    dropped: list[str] = []
    for package in packages:
        if not isinstance(package, dict):
            raise ReportProblem(f"{SAID} lists something that is not a package")
        name = package.get("name")
        if not isinstance(name, str) or not NAME.match(name):
            raise ReportProblem(f"{SAID} lists a package without a name the gate can use")
        if own and canonical(name) == canonical(own):
            if "wheels" in package or "sdist" in package:  # a release, not the stub (an archive) nor the tree
                version = package.get("version")
                dropped.append(f"{name} {version if isinstance(version, str) and VERSION.match(version) else '?'}")
            continue
        pin, args, is_direct = _one(package, name, tree)
        if pin:
            pinned.append(pin)
            if is_direct:
                direct.append(name)
        local.extend(args)
    return Resolved(tuple(sorted(set(pinned))), tuple(local), tuple(sorted(set(direct))), tuple(dropped))


def _one(package: Mapping[str, object], name: str, tree: str) -> tuple[str, list[str], bool]:
    """(a pin, the install arguments for what is head's, named by URL)."""
    folder, vcs, archive = (package.get(k) for k in ("directory", "vcs", "archive"))
    if isinstance(folder, dict):
        path = _inside(_location(folder, tree), tree, name)
        return "", ["-e", path] if folder.get("editable") is True else [path], False
    if isinstance(vcs, dict):
        return "", [_vcs(vcs, name)], False
    if isinstance(archive, dict):
        where = _location(archive, tree)
        if _is_inside(where, tree):
            return "", [where], False
        return _pin(name, package.get("version"), [archive]), [], True
    wheels = package.get("wheels", [])
    files = [*(wheels if isinstance(wheels, list) else [None]), *([package["sdist"]] if "sdist" in package else [])]
    if not files or not all(isinstance(f, dict) for f in files):
        raise ReportProblem(f"{SAID} names {name} without a file the gate can pin")
    inside = sorted({where for f in files if _is_inside(where := _location(f, tree), tree)})
    if len(inside) > 1:
        raise ReportProblem(f"{SAID} names {len(inside)} files in the tree for {name}: name one")
    if inside:
        return "", inside, False
    return _pin(name, package.get("version"), files), [], False


def _pin(name: str, version: object, files: list[object]) -> str:
    hashes = sorted(
        {
            h["sha256"]
            for f in files
            if isinstance(f, dict) and isinstance(h := f.get("hashes"), dict) and isinstance(h.get("sha256"), str)
        }
    )
    if not (isinstance(version, str) and VERSION.match(version) and hashes and all(SHA256.match(h) for h in hashes)):
        raise ReportProblem(
            f"{SAID} names {name} {version if isinstance(version, str) else '?'} "
            "without a name, version and sha256 the gate can pin"
        )
    return f"{name}=={version} " + " ".join(f"--hash=sha256:{h}" for h in hashes)


def _location(entry: Mapping[str, object], tree: str) -> str:
    """Where a file or folder is: its `path` (relative to the tree, where
    the lock was written) or a file URL's path; a remote URL as it is."""
    path, url = entry.get("path"), entry.get("url")
    if isinstance(path, str) and path:
        return os.path.normpath(os.path.join(tree, path))
    if isinstance(url, str) and url.startswith("file:"):
        return os.path.normpath(unquote(urlsplit(url).path))
    if isinstance(url, str) and url:
        return url
    raise ReportProblem(f"{SAID} names a file or folder with neither a path nor a URL")


def _inside(path: str, tree: str, name: str) -> str:
    if not _is_inside(path, tree):
        raise ReportProblem(f"{SAID} points outside the tree for {name}: {path}")
    return path


def _is_inside(path: str, tree: str) -> bool:
    return path == tree or path.startswith(tree + "/")


def _vcs(vcs: Mapping[str, object], name: str) -> str:
    kind, url, commit = vcs.get("type"), vcs.get("url"), vcs.get("commit-id")
    if not (
        kind in ("git", "hg", "svn", "bzr")
        and isinstance(url, str)
        and re.match(r"^[a-z+]+://\S+$", url)
        and isinstance(commit, str)
        and re.match(r"^[0-9A-Za-z._-]{1,64}$", commit)
    ):
        raise ReportProblem(f"{SAID} names {name} from version control without a URL and commit the gate can use")
    return f"{name} @ {kind}+{url}@{commit}"
