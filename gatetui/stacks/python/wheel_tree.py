"""Does the wheel built from head hold the code the commit holds?

The runs test the editable install, which imports the tree; what users get
is the wheel, and a build hook can put other code in it (a `build_py` that
swaps a module, a `.pth` file no commit holds). The gate builds head's
wheel in the install workspace and reads it here as untrusted bytes: its
code files are compared with head's commit, and each that differs, or that
the commit does not hold, is named for a person to review.

A member `pkg/core.py` is matched under one root per top-level package:
the folder of head's tree (`""`, `src/`, ...) under which most of that
package's members are found. A layout that remaps a package to a folder of
another name (`package_dir`) is reported as not in the commit: a review, not
a failure.
"""

from __future__ import annotations

import io
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from gatetui.git.snapshot import Snapshot
from gatetui.stacks.python.version_file import holds_only_a_version, version_files

REPORT = "wheel.whl"  # the report the wheel is copied to
CODE_SUFFIXES = (".py", ".pth", ".pyc")  # what runs when the wheel is installed and imported
MAX_MEMBER = 16 << 20  # a member this big is named, not read
SHOWN = 5
READ_ERRORS = (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError)


@dataclass(frozen=True)
class WheelFinding:
    member: str
    said: str

    def __str__(self) -> str:
        return f"{self.member} {self.said}"


def wheel_findings(wheel: bytes, head: Snapshot, generated: Iterable[str] = ()) -> list[WheelFinding]:
    """Each code file of `wheel` that head's commit does not hold as is.

    `generated` are tree paths a build writes by design (setuptools-scm's
    version file): the wheel may hold them though git does not. A wheel that
    is no zip archive is itself a finding."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(wheel))
        members = _code_members(archive)
    except READ_ERRORS as err:
        return [WheelFinding("the wheel", f"could not be read ({err})")]
    with archive:
        roots = _roots(members, head)
        # base's version files, and head's own (a release that starts to write one): either
        # way only a version may be in it (_compare), so head's saying so lends it nothing
        made = set(generated) | {file.path for file in version_files(head)}
        found: list[WheelFinding] = []
        for name, info in sorted(members.items()):
            path = roots.get(_top(name), "") + name
            finding = _compare(archive, info, name, path, head, path in made)
            if finding is not None:
                found.append(finding)
        return found


def describe(findings: Sequence[object]) -> str:
    """The install check's detail when the wheel holds other code."""
    shown = "; ".join(str(f) for f in findings[:SHOWN])
    more = f"; and {len(findings) - SHOWN} more" if len(findings) > SHOWN else ""
    return (
        f"the wheel built from head holds code the commit does not: {shown}{more} "
        "(a build step changed what users would install; the runs tested the tree)"
    )


def _code_members(archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    """Code files by the path they install at: `.dist-info` is the wheel's
    own metadata; `NAME.data/purelib/` and `platlib/` install at the root."""
    out: dict[str, zipfile.ZipInfo] = {}
    for info in archive.infolist():
        name = info.filename
        first, _, rest = name.partition("/")
        if info.is_dir() or first.endswith(".dist-info"):
            continue
        if first.endswith(".data"):
            scheme, _, rest = rest.partition("/")
            if scheme not in ("purelib", "platlib"):
                continue
            name = rest
        if name.endswith(CODE_SUFFIXES):
            out[name] = info
    return out


def _version_only(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bool:
    try:
        return info.file_size <= MAX_MEMBER and holds_only_a_version(archive.read(info))
    except READ_ERRORS:
        return False


def _top(name: str) -> str:
    return name.split("/", 1)[0]


def _roots(members: Mapping[str, zipfile.ZipInfo], head: Snapshot) -> dict[str, str]:
    """For each top-level package, the tree folder most of its members sit in."""
    by_base: dict[str, list[str]] = defaultdict(list)
    for path in head.paths:
        by_base[path.rsplit("/", 1)[-1]].append(path)
    votes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for name in members:
        for path in by_base[name.rsplit("/", 1)[-1]]:
            if path == name or path.endswith("/" + name):
                votes[_top(name)][path[: len(path) - len(name)]] += 1
    return {top: max(sorted(count), key=lambda root: count[root]) for top, count in votes.items()}


def _compare(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, path: str, head: Snapshot, generated: bool
) -> WheelFinding | None:
    if generated:  # the build writes it by design, committed or not: only a version may be in it
        return None if _version_only(archive, info) else WheelFinding(name, "is a version file holding code")
    if path not in head:
        kind = "compiled code" if name.endswith(".pyc") else "a file"
        return WheelFinding(name, f"is {kind} the commit does not hold")
    if info.file_size > MAX_MEMBER:
        return WheelFinding(name, f"is {info.file_size} bytes: too big to compare")
    ours = head.read(path) or b""
    try:
        same = info.file_size == len(ours) and archive.read(info) == ours
    except READ_ERRORS as err:
        return WheelFinding(name, f"could not be read from the wheel ({err})")
    return None if same else WheelFinding(name, f"differs from the commit's {path}")
