"""What a stack says about the tools head's build imports, kept as a layer,
and about the requirements a tree declares, resolved beside head's build.

Each build of head's project (the install's, and its distributable's
beside it) made an environment of its own and installed its build backend
there, and every module of that backend was compiled again in memory: most
of the build's time, though head's build code is a small part of it. The
tools head's build declares (a pyproject's build-system requires) are data
the gate reads from the tree; resolved to pins with hashes like any other
set, they are installed and compiled once per set into a layer where no
code of head's runs, sealed, and shown read-only to head's builds in place
of an environment of their own. Head's build still runs, with head's
backend; it can import the layer and write none of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gatetui.stacks.base import Resolved


@dataclass(frozen=True)
class BuildTools:
    """`requires` reads the tools' requirement lines from the tree's
    `files` (None: nothing to layer, e.g. a tool named by URL, or no file
    the gate can read); `resolve` pins them ({requirements}: the lines,
    quoted; {report}: where it writes) where nothing of head's has run,
    and `read` reads that report; `build` makes the layer in `folder` (the
    last command takes the pinned set through `pinned_command`), `key` names
    it from the pins and what `interpreter` prints, `verify` says what is
    wrong with it. While it is shown ({tools}: where), each command of
    `swaps` is run as its value: the same build against the layer, which
    falls back to the command's own way when the layer cannot build head's
    project (a build that asks for a tool its declaration does not name)."""

    files: tuple[str, ...]
    requires: Callable[[Mapping[str, bytes]], tuple[str, ...] | None]
    resolve: str
    read: Callable[[bytes | None, str], Resolved]  # the report, the tree's path
    build: tuple[str, ...]
    pinned_command: Callable[[str, Resolved], str]
    interpreter: tuple[str, ...]
    key: Callable[[Resolved, str], str]
    verify: Callable[[str], list[str]]
    swaps: Mapping[str, str]
    folder: str = ".tools"


@dataclass(frozen=True)
class DeclaredResolve:
    """The resolve started from what the tree declares, beside head's build
    (gate/install/early_layer.py), so the dependency layer is built while head's
    project installs: `metadata` reads head's project's name and METADATA
    from the tree's `files` (None: the build decides them, and the resolve
    waits for it as before); `command` resolves from that METADATA, given
    to it in the variable `variable` ({own}: the name; {report});
    `canonical`: a project's name as the stack compares names."""

    files: tuple[str, ...]
    metadata: Callable[[Mapping[str, bytes], str], tuple[str, str] | None]  # files, the version handed the build
    command: str
    variable: str
    canonical: Callable[[str], str]
