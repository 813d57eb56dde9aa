"""Split what pip resolved into what the index vouches for and what is head's.

Head's build code runs while pip resolves (it answers the project's
metadata), and it could then write distributions of its own into the venv,
RECORD and all: nothing written in a step where head's code runs can be
told from pip's work. So the gate resolves first (pip's installation report,
a dry run), installs head's own project and everything local to the tree
(`--no-deps`, head's code runs), checks that nothing else appeared, and only
then installs the third-party distributions, pinned by name, version and
hash, in a step where no code of head's runs.

The report is written in a step head's code runs in, so it is read as
hostile: only names, versions and hashes are taken from it (validated
here), never a URL or a path, and the pinned install finds each through the
user's own index configuration. A forged report can only ask for other
artifacts from that index, as a declared dependency could.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from urllib.parse import unquote, urlsplit

from gatetui.stacks.base import ReportProblem, Resolved

NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
VERSION = re.compile(r"^[A-Za-z0-9.+!_-]{1,64}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")


def split(raw: bytes | None, tree: str, own: str = "") -> Resolved:
    """Pinned index artifacts, and pip arguments for the rest, from a pip
    installation report (pip install --dry-run --report); `tree` is the
    workspace path as the install saw it. Head's own project `own` is
    never pinned: its stub (own_stub.py, named by URL) is dropped, and a
    release from the index (a self-pin pip took in place of the installed
    tree), which would shadow head's code, is named in `dropped`."""
    try:
        data = json.loads(raw or b"")
        items = data["install"]
        if not isinstance(items, list):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        raise ReportProblem("pip wrote no readable installation report") from None
    pinned: list[str] = []
    local: list[str] = []
    direct: list[str] = []
    dropped: list[str] = []
    for item in items:
        pin, args = _one(item, tree.rstrip("/"))
        if pin and own and canonical(pin.split("==", 1)[0]) == canonical(own):
            if not (isinstance(item, dict) and item.get("is_direct") is True):  # the stub is named by URL
                dropped.append(" ".join(pin.split(" ", 1)[0].split("==", 1)))
        elif pin:
            pinned.append(pin)
            if isinstance(item, dict) and item.get("is_direct") is True:
                direct.append(pin.split("==", 1)[0])
        local.extend(args)
    return Resolved(tuple(sorted(set(pinned))), tuple(local), tuple(sorted(set(direct))), tuple(dropped))


def layer_key(resolved: Resolved, interpreter: str, kind: str = "") -> str:
    """The dependency layer's key: sha256 over the sorted (name, version,
    file hashes) of every pinned distribution, and the interpreter and
    platform line. A set that differs in one file is another layer. `kind`
    (a build tools layer's) keeps a layer made otherwise from one set
    apart from the dependency layer of that set."""
    items = sorted(_parts(line) for line in resolved.pinned)
    named = {"kind": kind} if kind else {}
    body = json.dumps({"pinned": items, "interpreter": interpreter.strip(), **named}, separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()


def _parts(line: str) -> tuple[str, str, str]:
    """`name==version --hash=sha256:digest...` (as _pin, or lock_report's,
    writes it: one hash or every file's of that version) in parts, the name
    in its canonical form, the hashes sorted."""
    requirement, _, hashes = line.partition(" --hash=")
    name, _, version = requirement.partition("==")
    digests = sorted(re.findall(r"sha256:[0-9a-f]{64}", hashes))
    return canonical(name), version, " ".join(digests)


def canonical(name: str) -> str:
    """A distribution's name as the index compares it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _one(item: object, tree: str) -> tuple[str, list[str]]:
    if not isinstance(item, dict):
        raise ReportProblem("pip's installation report lists something that is not a distribution")
    info, meta = item.get("download_info"), item.get("metadata")
    if not isinstance(info, dict) or not isinstance(meta, dict):
        raise ReportProblem("pip's installation report lists a distribution without its origin")
    url = str(info.get("url", ""))
    if "dir_info" in info:
        path = _tree_path(url, tree)
        dir_info = info.get("dir_info")
        editable = isinstance(dir_info, dict) and bool(dir_info.get("editable"))
        return "", ["-e", path] if editable else [path]
    if "vcs_info" in info:
        vcs = info["vcs_info"] if isinstance(info["vcs_info"], dict) else {}
        return "", [f"{vcs.get('vcs', 'git')}+{url}@{vcs.get('commit_id', '')}"]
    if url.startswith("file:") and _is_inside(unquote(urlsplit(url).path), tree):
        return "", [_tree_path(url, tree)]
    return _pin(meta, info), []


def _pin(meta: dict[str, object], info: dict[str, object]) -> str:
    name, version = str(meta.get("name", "")), str(meta.get("version", ""))
    archive = info.get("archive_info")
    hashes = archive.get("hashes") if isinstance(archive, dict) else None
    digest = str((hashes or {}).get("sha256", "")) if isinstance(hashes, dict) else ""
    if not digest and isinstance(archive, dict):
        digest = str(archive.get("hash", "")).removeprefix("sha256=")
    if not (NAME.match(name) and VERSION.match(version) and SHA256.match(digest)):
        raise ReportProblem(
            f"pip's installation report names {name or '?'} {version or '?'} "
            "without a name, version and sha256 the gate can pin"
        )
    return f"{name}=={version} --hash=sha256:{digest}"


def _tree_path(url: str, tree: str) -> str:
    path = unquote(urlsplit(url).path)
    if not _is_inside(path, tree):
        raise ReportProblem(f"pip's installation report points outside the tree: {path}")
    return path


def _is_inside(path: str, tree: str) -> bool:
    return path == tree or path.startswith(tree + "/")


def heredoc(command: str, lines: tuple[str, ...]) -> str:
    """The command with the pinned lines on its stdin (`-r /dev/stdin`):
    they are shown with the command, and no file is written for them."""
    body = "\n".join(lines)
    if "GATE_PINNED" in body or any(not NAME.match(line.split("==", 1)[0]) for line in lines):
        raise ReportProblem("a pinned requirement the gate could not pass on safely")
    return f"{command} <<'GATE_PINNED'\n{body}\nGATE_PINNED"


def local_args(resolved: Resolved) -> str:
    return shlex.join(resolved.local)
