"""What every stack provides, and the records its profile is made of
(the profile itself: stacks/profile.py).

A stack is one ecosystem (python, node, go): how it is detected, how it
installs, how its tests run and report, how its test files are read. Each
lives in a package of its own under `stacks/` and hands the registry one
`Stack` value; the gate, the backends and the TUI read the declared fields
and never ask a stack's name. Optional capabilities are fields whose empty
value says "not here" (no random-order plugin, no dependency step), so
nothing is guessed with `getattr`. Shaped after pre-commit's `languages/`:
the same few names per stack, defaults in these records.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gatetui.stacks.offered import Offered
from gatetui.stacks.testdefs import TestLanguage

if TYPE_CHECKING:
    from gatetui.config import Settings
    from gatetui.git.snapshot import Snapshot
    from gatetui.stacks.build_tools import DeclaredResolve
    from gatetui.stacks.profile import Profile


@dataclass(frozen=True)
class GateScript:
    """A script of the gate's own, passed in `env` and run by `command` in a
    sandbox (so nothing of it lives in the tree head could shadow)."""

    command: str
    env: Mapping[str, str]


@dataclass(frozen=True)
class EnvironmentCheck:
    """A command the gate runs after the install and before any test run:
    it writes {"problems": [...], "summary": "..."} as JSON to {report}, and
    a summary that is not empty fails the install with it. It also names
    the runner's plugins the verified distributions offer ("plugins":
    [{"name", "dist", "own"}], "runner": its version); `loads` turns them
    into what every test run of that environment loads (RunPlugin), so
    that the runner registers nothing the tree holds. None: the runner
    loads what it finds itself."""

    command: str
    env: Mapping[str, str]
    loads: Callable[[Offered], RunPlugin] | None = None


@dataclass(frozen=True)
class OwnInstall:
    """Head's own install code, run apart from the rest of the install
    (npm's root lifecycle scripts). The install commands before it make the
    environment where no code of head's runs; `fingerprint` (a script of the
    gate's writing {"files": {path: digest}} of the environment's folders to
    {report}) is taken before and after it, and again in the first copy
    handed on, where no code of head's has run. Any difference fails the
    install, naming the files: what the runs execute is what the index gave,
    never what head's scripts made of it."""

    command: str
    label: str  # how a failure names the step: "npm's lifecycle scripts"
    fingerprint: GateScript


class ReportProblem(Exception):
    """A resolver's report cannot be read: the install step fails with this."""


@dataclass(frozen=True)
class Resolved:
    """What a resolve step found, split by who vouches for it."""

    pinned: tuple[str, ...]  # the index's, pinned: installed where head's code does not run
    local: tuple[str, ...]  # what lives in the tree or a VCS: installed with head's own project
    direct: tuple[str, ...] = ()  # pinned ones head named by URL (`name @ url`): never in a shared layer
    dropped: tuple[str, ...] = ()  # the index's releases of head's own project ("name version"): never installed


@dataclass(frozen=True)
class LayerRecipe:
    """The pinned third-party set as a dependency layer: built once per
    resolved set in a workspace no code of head's runs in, kept by the
    supervisor, shown read-only underneath every gate whose resolve gives
    the same key; head's own project stays in the gate's own environment.
    `build` runs in the layer's workspace ({layer}: the folder it makes;
    the last command takes the pinned set like Dependencies.pinned);
    `interpreter` (an argv, run on the supervisor's machine) prints what
    the key names besides the set (interpreter, platform); `verify` names
    what is wrong with a built layer (every file against its RECORD);
    `link` runs in the gate's workspace, after every step of head's code,
    and shows the layer at {layer} to its environment; the environment
    check is told where with the variable `link_env`. `cache`: what the
    runs would otherwise redo in every command, made once with the layer
    (see LayerCache)."""

    build: tuple[str, ...]
    interpreter: tuple[str, ...]
    key: Callable[[Resolved, str], str]
    verify: Callable[[str], list[str]]
    link: GateScript
    link_env: str
    folder: str = ".layer"
    cache: LayerCache | None = None


@dataclass(frozen=True)
class LayerCache:
    """A cache keyed by file paths (Python's bytecode under a pycache
    prefix), made with the layer: `script` runs in the layer's workspace
    after its build, where nothing of head's ever was, and leaves `folder`
    holding `layer/` (mirroring the layer: layer/lib/x.pyc for
    {layer}/lib/x.py) and `root/` (mirroring absolute paths of the machine,
    e.g. its standard library). It is kept, sealed and verified with the
    layer, and every run is shown both read-only at those paths under its
    own {bytecode} folder: a run reads that bytecode instead of compiling
    it again, and can write none of it."""

    script: GateScript
    folder: str


@dataclass(frozen=True)
class Dependencies:
    """Third-party dependencies in a step of their own, where no code of
    head's runs (see gate/install/steps.py). The install commands install head's
    own project without its dependencies; `resolve` writes the resolver's
    report to {report} from the installed project's metadata ({own}: its
    name, which must match `own_name`); `read` turns that hostile report
    into a `Resolved` (or raises ReportProblem), given the tree's path and
    that name; `local_command` installs
    what else lives in the tree, and `pinned_command` the index's."""

    resolve: str
    local: str
    pinned: str
    own_name: re.Pattern[str]
    read: Callable[[bytes | None, str, str], Resolved]
    local_command: Callable[[str, Resolved], str]
    pinned_command: Callable[[str, Resolved], str]
    layer: LayerRecipe | None = None  # the pinned set as a layer kept between gates; None: installed each gate
    resolve_env: Mapping[str, str] = field(default_factory=dict)  # the resolve's own variables (its scripts)
    declared: DeclaredResolve | None = None  # the resolve from what the tree declares, beside head's build


@dataclass(frozen=True)
class LockLayer:
    """Third-party modules a lock file pins by hash (Go's go.sum), fetched
    once per lock into a dependency layer and shown read-only to the
    install and every run, in place of a fetch per gate. Made in a
    workspace holding only `files` (read by the gate from the tree being
    installed; data the fetch reads, never code it runs) by `build` ({layer}:
    the folder it fills); `key` names the layer from those files and what
    `toolchain` (an argv run where the runs run, on a machine holding
    nothing of head's) prints, or None when there is nothing to layer
    (decided by the files alone). `env`: the variables ({layer}: where it
    is shown) the install's commands and the runs get while it is in use.
    `at`: a folder of the layer's `folder` that must stand at the same place
    in the tree (npm's node_modules): shown there, read-only, by a workspace
    that can (`Workspace.shows_in_tree`); `replaces`: the profile's install
    commands that the layer stands for, left out while it is in use.
    A build that fails leaves the gate to fetch for itself, said in its
    notes."""

    files: tuple[str, ...]
    key: Callable[[Mapping[str, bytes], str], str | None]
    toolchain: tuple[str, ...]
    build: tuple[str, ...]
    folder: str
    env: Mapping[str, str]
    at: str = ""
    replaces: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunPlugin:
    """Files the gate writes into one run's copy, under a folder drawn per
    run ({folder} in `env` is its path), and the environment that loads them;
    other `{name}`s are the gate's values (`seed`; `reruns`, `afresh`, `only`:
    gate/judging/fresh.py). Values join the profile's own variables of that name."""

    files: Mapping[str, bytes]
    env: Mapping[str, str]

    def env_for(self, folder: str, **values: object) -> dict[str, str]:
        out = {}
        for key, value in self.env.items():
            for name, given in {"folder": folder, **values}.items():
                value = value.replace(f"{{{name}}}", str(given))
            out[key] = value
        return out


@dataclass(frozen=True)
class BuildCheck:
    """Head's distributable built beside the install, from a copy of the
    tree, into {report} (named `report`); `findings` reads it back (hostile)
    against head's commit and names each thing it holds that the commit
    does not; `describe` makes them the install check's detail. `copy`
    keeps the tree in {source} before the install starts: the build runs
    beside the install, which writes into the tree (an egg-info, a build
    folder), and a copy taken then held whatever the install had written
    so far, a verdict that turned on timing."""

    copy: str
    command: str
    report: str
    label: str  # what is built, as a failure names it: "head's wheel"
    findings: Callable[[bytes, Snapshot, tuple[str, ...]], Sequence[object]]
    describe: Callable[[Sequence[object]], str]


@dataclass(frozen=True)
class Finding:
    path: str
    what: str  # one phrase an agent can act on

    def __str__(self) -> str:
        return f"{self.what} ({self.path})"


@dataclass(frozen=True)
class HookScan:
    """Ways head bends the runner from outside its test files, read from the diff."""

    plugins: tuple[str, ...] = ()  # runner plugins head registers and base did not
    findings: tuple[Finding, ...] = ()  # plugins and startup hooks: fail old_tests
    skips: tuple[Finding, ...] = field(default=())  # skips in library code: fail no_new_skips
    reaches: tuple[Finding, ...] = field(default=())  # library code reaching into the runner: review
    old_tests_env: Mapping[str, str] = field(default_factory=dict)  # keeps head's plugins out of base's tests


def no_hooks(base: Snapshot, head: Snapshot, is_test_file: Callable[[str], bool]) -> HookScan:
    return HookScan()


@dataclass(frozen=True)
class RunTree:
    """The tree one run ran: head's commit with the gate's files over it
    (base's sealed files for old_tests, the hidden tests); None deletes."""

    head: Snapshot
    over: Mapping[str, bytes | None] = field(default_factory=dict)

    def paths(self) -> set[str]:
        return {p for p in self.head.paths if p not in self.over} | {
            p for p, data in self.over.items() if data is not None
        }

    def text(self, path: str) -> str | None:
        if path in self.over:
            data = self.over[path]
            return None if data is None else data.decode("utf-8", "replace")
        return self.head.text(path)


# (path, line) -> the ids of the tests that ran it; no ids: it ran only outside tests (import, collection).
Reached = Mapping[tuple[str, int], frozenset[str]]


@dataclass(frozen=True)
class LineCoverage:
    """How one of head's runs measures which test executes which line.

    `plugin` is written into that run's copy and loaded there; its env gets
    {report} (where to write) and {files} (the files to measure, a JSON list
    of tree paths). `read` turns the hostile report into `Reached` for the
    files asked, given head's text of each (or raises ReportProblem);
    `statements`: a text's changed executable lines, each as its statement's
    first. `code_file`: a path holds the stack's code; `shipped`: which of
    head's paths its distribution ships (None: not known); `headers`: the
    lines given in a function's header, each with its body's first and last
    lines. `fail_fast` stops a run at its first failure (a mutant's)."""

    plugin: RunPlugin
    report: str
    read: Callable[[bytes, Mapping[str, str]], Reached]
    code_file: Callable[[str], bool]
    statements: Callable[[str, frozenset[int]], frozenset[int]]
    shipped: Callable[[Snapshot], Callable[[str], bool] | None]
    headers: Callable[[str, frozenset[int]], Mapping[int, tuple[int, int]]]
    fail_fast: Mapping[str, str] = field(default_factory=dict)


def nothing_to_import(paths: tuple[str, ...]) -> list[str]:
    return []


@dataclass(frozen=True)
class Stack:
    """One ecosystem, as the gate sees it."""

    name: str
    markers: tuple[str, ...]  # files at the repository's top that mean this stack
    load: Callable[[Snapshot, Settings], Profile]
    test_file: Callable[[Profile, str], bool]  # whether a path holds tests the profile's runner collects
    languages: tuple[TestLanguage, ...] = ()
    default_sections: tuple[str, ...] = ()  # sections of shared files sealed by default
    indexes: tuple[str, ...] = ()  # package indexes an install reaches ("pip", "npm", "go")
    scan_hooks: Callable[[Snapshot, Snapshot, Callable[[str], bool]], HookScan] = no_hooks
    importable: Callable[[tuple[str, ...]], list[str]] = nothing_to_import  # what the import check imports
    needs: tuple[str, ...] = ()  # the programs its default commands run, from the machine

    def __hash__(self) -> int:
        return hash(self.name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stack) and other.name == self.name

    def __str__(self) -> str:
        return self.name
