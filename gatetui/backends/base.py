"""The narrow interface between the gate and the machines it runs on.

A backend opens a fresh workspace holding head's tree; a workspace runs a
command with a time limit while streaming its output, takes files written
over it, and forks into copies that each run their own installed code. The
gate does not know which backend it drives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from gatetui.errors import BackendError

OutputSink = Callable[[str], None]
TreeExporter = Callable[[Path], None]


@dataclass(frozen=True)
class CommandResult:
    exit_code: int | None  # None when the command was killed
    wall_seconds: float
    cpu_seconds: float = 0.0
    peak_rss_bytes: int = 0
    timed_out: bool = False
    signal: int | None = None
    output_tail: str = ""  # the last part of the output, capped
    dropped_bytes: int = 0  # output beyond the cap: counted, not kept
    limit_seconds: float | None = None  # the time limit it ran under, when known

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def describe_end(self) -> str:
        """How the command ended, in words for a check's detail."""
        if self.timed_out:  # the limit, not the clock: a loaded machine stops it a little later
            limit = self.wall_seconds if self.limit_seconds is None else self.limit_seconds
            return f"stopped at its time limit after {limit:.0f} s"
        if self.signal is not None:
            return f"killed by signal {self.signal}"
        return f"exit code {self.exit_code}"


class Workspace(Protocol):
    label: str

    @property
    def path(self) -> str:
        """The tree's path as its commands see it (the same for every copy)."""
        ...

    async def run(
        self,
        command: str,
        *,
        timeout: float,
        on_output: OutputSink,
        env: Mapping[str, str] | None = None,
        network: bool = True,
    ) -> CommandResult: ...

    def report_path(self, name: str) -> str:
        """Where a command should write a report, as the command sees it."""
        ...

    async def read_report(self, name: str) -> bytes | None: ...

    def scratch_path(self, name: str) -> str:
        """A folder for one command's own use (a build cache), under a name
        nothing that ran before could predict; the command makes it. The
        one named `bytecode` is made by the backend where it can, and is
        read-only to the command (a pycache prefix nothing can plant in)."""
        ...

    async def write_files(self, files: Mapping[str, bytes | None]) -> None:
        """Write (bytes) or delete (None) files, paths relative to the tree."""
        ...

    async def fork(
        self, count: int, export: TreeExporter, keep: tuple[str, ...] = (), network: bool = False
    ) -> list[Workspace]:
        """Copies for the test runs, each running its own code: a fresh tree
        from `export` at this workspace's path, with only the `keep` folders
        of this (installed) one, read-only where the backend can. `network`:
        whether the copies' commands may have it at all (a backend that sets
        it per machine sets it here; `run`'s own flag still applies). Every fork
        of a workspace hands on the same `keep` bytes (nothing runs in the
        installed one between forks), so a check of them in one copy holds
        for all; the installed workspace may take no command after its
        first fork."""
        ...

    @property
    def shows_in_tree(self) -> bool:
        """Whether `show_layer` can also show a layer's folder at a place
        in the tree (read-only, over whatever the tree holds there)."""
        ...

    async def show_layer(self, folder: Path, at: str = "") -> str:
        """Show a dependency layer (a folder of the backend's layer store)
        read-only to this workspace's later commands and to its copies;
        where they see it. Its cache, where the store kept one (a `cache`
        folder beside it), is shown read-only at that path under each
        command's `scratch_path("bytecode")` where the backend can (else the
        runs do without). `at`: its folder of that name is also shown at
        that place in the tree (only where `shows_in_tree`). Only called on
        a backend whose `layers` is set."""
        ...

    async def close(self) -> None:
        """End the workspace and everything it started; a second close does
        nothing (the runner and the run's ClosingBackend may both close it)."""
        ...


class LayerUnavailable(BackendError):
    """The backend cannot find, keep or show a dependency layer just now (its
    API refused: snapshots unsupported on the account, a service down):
    nothing is wrong with the gate's work, which installs for itself and
    says why in the run's notes."""


@dataclass(frozen=True)
class Found:
    """A layer looked up: its folder (the supervisor's, verified against
    its manifest; on Runtime where sandboxes started from its snapshot hold
    it), or None (to build); `note` says a layer was thrown away, for the
    run's notes; `about` is what was kept with it when built (what it
    holds, what building it used)."""

    path: Path | None
    note: str = ""
    about: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class LayerBuild:
    """One layer to build: `make` fills `folder` (and `cache`, the layer's
    path-keyed cache, when named) in a fresh workspace holding nothing of
    head's but `files` (plain files the gate writes there: a lock file);
    `verify` names what is wrong with the folder made (empty: nothing);
    `about` is kept with the layer. A store that cannot verify or keep a
    cache where it keeps layers says so in its docstring (`keeps_cache`)."""

    key: str
    folder: str
    make: Callable[[Workspace], Awaitable[bool]]
    verify: Callable[[str], list[str]] = field(default=lambda folder: [])
    about: Mapping[str, object] = field(default_factory=dict)
    cache: str = ""
    files: Mapping[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class BuiltLayer:
    """What a layer's build came to: its folder; or none, with what was
    wrong with what it made (`problems`), or with no problem at all when
    `make` itself failed (its steps say why)."""

    layer: Path | None
    problems: tuple[str, ...] = ()


class LayerStore(Protocol):
    """Dependency layers kept between gates (backends/layers.py, and
    runtime_layers.py as snapshots): keyed by what was resolved, built
    once, verified, never written by anything that runs head's code.
    `near` is the gate's workspace that asks: a store that makes machines
    for its work makes them in that workspace's run (its cap, its cleanup).
    `keeps_cache`: whether a layer's path-keyed cache (LayerCache) is kept
    and shown to the runs; where not, it is not made. `moves_to_show`:
    whether showing a layer to a workspace that has started moves it to
    another machine (Runtime's snapshots): not worth it for a layer that
    only spares time (the build tools')."""

    keeps_cache: bool
    moves_to_show: bool

    async def interpreter(self, argv: tuple[str, ...], near: Workspace) -> str:
        """What `argv` prints where the runs run, on a machine holding
        nothing of head's (the interpreter and platform a key names)."""
        ...

    def claim(self, key: str) -> AbstractAsyncContextManager[None]:
        """The key's lock, exclusive: one gate builds, the others wait and find it."""
        ...

    async def find(self, key: str) -> Found: ...

    async def build(self, build: LayerBuild, near: Workspace) -> BuiltLayer:
        """The layer `build` describes, made in a fresh workspace, then taken
        into the store, made the supervisor's and read-only, verified, and
        its manifest written."""
        ...

    async def hold(self, key: str, layer: Path) -> Callable[[], None] | None:
        """Keep the layer found or built at `layer` from being pruned while
        a run uses it; calling what is returned lets it go. None: it was
        removed before it could be held."""
        ...


class Enforcement(Protocol):
    """What a backend enforces on this machine, as RunStarted and the JSON
    say it (the local backend's Isolation)."""

    def to_json(self) -> dict[str, object]: ...


ProgressSink = Callable[[str], None]


class Backend(Protocol):
    """What the gate drives. Its capabilities are declared members that every
    backend has, so the gate reads them and never probes for them."""

    name: str
    # Where the backend's own news goes (Runtime's capacity countdown, a
    # crash's sandboxes swept): stderr for the CLI, a notification in the
    # TUI, which sets it; a backend with nothing to say never calls it.
    on_progress: ProgressSink

    @property
    def measured(self) -> bool:
        """Usage figures the provider measures and bills (Runtime), rather
        than this machine's own, priced at Runtime's rates as an estimate."""
        ...

    @property
    def notes(self) -> tuple[str, ...]:
        """Protections this backend does not enforce here, said plainly."""
        ...

    @property
    def layers(self) -> LayerStore | None:
        """Where dependency layers are kept between gates; None: every gate
        installs its dependencies itself."""
        ...

    @property
    def isolation(self) -> Enforcement | None:
        """The protections enforced here; None from a backend that has none
        of this machine's to report (Runtime's sandboxes are machines of
        their own)."""
        ...

    async def account(self) -> dict[str, float] | None:
        """The account's credit in dollars by name after a run; None from a
        backend with no account to ask."""
        ...

    async def preflight(self, tools: tuple[tuple[str, ...], ...], indexes: tuple[str, ...] = ()) -> None:
        """Raise BackendError naming the first tool that does not run."""
        ...

    async def open(self, export: TreeExporter, label: str) -> Workspace: ...


CLOSE_ATTEMPTS = 3  # a close cancelled before it began is begun again, this often at most


async def close_all(workspaces: Sequence[Workspace]) -> None:
    """Close every one of `workspaces`, side by side, however often the
    caller is cancelled meanwhile.

    A stopped run is cancelled more than once (the consumer's generator
    closing, then asyncio.run cancelling every task it finds), and a loop
    of shielded closes stopped at the second cancel: the workspaces after
    it were never closed and their sandboxes outlived the run. Here the
    closes run as tasks a cancel of the caller does not reach, and the
    caller waits for them before it is cancelled. asyncio.run also cancels
    the close tasks it finds; one cancelled before its first step never ran
    a line of its own cleanup, so it is begun again: a close ends what it
    began or sweeps on its own when cancelled mid-way, and returns at once
    when called again."""
    pending, cancelled, failures = list(workspaces), False, []
    for _ in range(CLOSE_ATTEMPTS):
        if not pending:
            break
        closing = asyncio.gather(*(w.close() for w in pending), return_exceptions=True)
        while not closing.done():
            try:
                await asyncio.shield(closing)
            except asyncio.CancelledError:
                cancelled = True
        ended = closing.result()
        failures += [err for err in ended if isinstance(err, Exception)]
        pending = [w for w, err in zip(pending, ended) if isinstance(err, asyncio.CancelledError)]
    if cancelled or pending:
        raise asyncio.CancelledError
    if failures:
        raise failures[0]
