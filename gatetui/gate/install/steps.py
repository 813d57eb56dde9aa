"""The install, in steps that keep head's code away from what it may not vouch for.

The profile's commands run first. Where the stack installs its third-party
dependencies apart (Install.dependencies: python), they install head's own
project alone (head's build code runs); the environment is checked to hold
nothing but head's; pip resolves the rest from the installed project's
metadata without installing (no second build); what else lives in the tree
is installed and checked the same way; only then are the index's
distributions installed, pinned, in a step where no code of head's runs. The
whole environment is checked last, and the profile's lint runs (its findings
judged against base's by the caller). Base's installs (to tell whose a failure is, the
baseline, base's lint findings) take the same steps without the checks.
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gatetui.backends.base import CommandResult, Workspace
from gatetui.gate.install.fingerprint import changes, describe, read_fingerprint
from gatetui.stacks.base import Dependencies, OwnInstall, ReportProblem, Resolved, RunPlugin
from gatetui.stacks.offered import Offered, OfferedPlugin
from gatetui.stacks.profile import Profile

if TYPE_CHECKING:
    from gatetui.gate.install.early_layer import EarlyResolve
    from gatetui.gate.install.layers import Built, LayerSteps

RESOLVED = "resolved.json"
Run = Callable[[Workspace, str, dict[str, str], bool], Awaitable[CommandResult]]


@dataclass(frozen=True)
class Failed:
    step: str  # the command as the profile names it (the same at base and head)
    result: CommandResult | None  # None: the gate refused what the steps left
    said: str = ""  # why, when the gate refused
    heads_own: bool = False  # a step only head's code decides (the import check): never compared with base


class Installer:
    def __init__(
        self,
        profile: Profile,
        run: Run,
        layers: LayerSteps | None = None,
        lock_files: Mapping[str, bytes] | None = None,
        tool_files: Mapping[str, bytes] | None = None,
    ):
        self.profile, self.run = profile, run
        self.lock_files, self.tool_files = (lock_files, tool_files)  # the tree's, for the lock and build tools layers
        self.swaps: dict[str, str] = {}  # BuildTools.swaps, while the build tools layer is shown
        self.early: EarlyResolve | None = None  # the resolve started beside head's build (early_layer.py)
        # the environment as the steps where no code of head's runs left it
        # (Install.own): what every copy handed on must hold
        self.expected: dict[str, str] | None = None
        self.layers = layers  # the run's use of the backend's dependency layers; None: none kept
        self.found: Counter[str] = Counter()  # the profile's lint's findings, by key (Install.lint)
        self.offered: Offered | None = None  # what the last check of the whole environment found it offers

    async def prepare(self, workspace: Workspace) -> None:
        """What a layer's key needs asked while the workspace has run no
        command (Runtime asks in the install's own machine then); asked once,
        so the build phase calls it before its first command too."""
        deps = self.profile.install.dependencies
        if self.layers is not None and deps is not None and deps.layer is not None:
            await self.layers.prepare(workspace, deps.layer)

    async def install(self, workspace: Workspace, verify: bool) -> Failed | None:
        """None when the workspace is installed (and, with `verify`, its
        environment may be handed on); else what failed."""
        profile, deps = self.profile, self.profile.install.dependencies
        env, commands = dict(profile.install.env), profile.install.commands
        await self.prepare(workspace)
        lock = profile.layers.lock
        if lock is not None and self.layers is not None and self.lock_files is not None:
            shown = await self.layers.locked(workspace, lock, self.lock_files, env)
            if shown is not None:  # the layer stands for the commands it replaces
                env.update(shown)
                commands = tuple(command for command in commands if command not in lock.replaces)
        for command in commands:
            result = await self.run(workspace, self.swaps.get(command, command), env, True)
            if not result.ok:
                return Failed(command, result)
        if profile.install.own is not None:
            failed = await self._own_install(workspace, profile.install.own, env, verify)
            if failed is not None:
                return failed
        if deps is None:
            refused = await self.check(workspace, "all", verify)
            return refused if isinstance(refused, Failed) else await linted(self, workspace, env)
        return await self._dependencies(workspace, deps, env, verify) or await linted(self, workspace, env)

    async def _dependencies(
        self, workspace: Workspace, deps: Dependencies, env: dict[str, str], verify: bool
    ) -> Failed | None:
        """Head's project is in: resolve from its installed metadata, install
        what else is the tree's, check, then the index's, pinned."""
        own = await self.check(workspace, "own", verify)
        if isinstance(own, Failed):
            return own
        if len(own) != 1 or not deps.own_name.match(own[0]):
            return Failed(
                deps.resolve,
                None,
                "the install left no single project of head's own to resolve "
                f"the dependencies of (found: {', '.join(own) or 'none'})",
            )
        early = await self.early.taken(own[0]) if self.early is not None else None
        resolved = (
            early.resolved if early is not None else await resolve_installed(self.run, workspace, deps, env, own[0])
        )
        if isinstance(resolved, Failed):
            return resolved
        _note_dropped(self.layers.notes if self.layers is not None else [], resolved)
        if resolved.local:
            result = await self.run(workspace, deps.local_command(deps.local, resolved), env, True)
            if not result.ok:
                return Failed(deps.local, result)
            refused = await self.check(workspace, "own", verify)
            if isinstance(refused, Failed):
                return refused
        if resolved.pinned:
            failed = await self._pinned(workspace, deps, resolved, env, early.built if early is not None else None)
            if failed is not None:
                return failed
        refused = await self.check(workspace, "all", verify)
        return refused if isinstance(refused, Failed) else None

    async def _own_install(
        self, workspace: Workspace, own: OwnInstall, env: dict[str, str], verify: bool
    ) -> Failed | None:
        """Head's own install code, between two fingerprints of the
        environment (compared here, and again in the copy handed on)."""
        before = await _fingerprint(self.run, workspace, own, "before") if verify else None
        if isinstance(before, Failed):
            return before
        result = await self.run(workspace, own.command, env, True)
        if not result.ok:
            return Failed(own.label, result)
        self.expected = before
        return await self.same_environment(workspace)

    async def same_environment(self, workspace: Workspace) -> Failed | None:
        """None when `workspace`'s environment is the one the install made
        before head's own install code ran (or there is none to hold it to)."""
        own = self.profile.install.own
        if own is None or self.expected is None:
            return None
        after = await _fingerprint(self.run, workspace, own, "after")
        if isinstance(after, Failed):
            return after
        found = changes(self.expected, after)
        return Failed(own.label, None, describe(found, own.label)) if found else None

    async def _pinned(
        self, workspace: Workspace, deps: Dependencies, resolved: Resolved, env: dict[str, str], built: Built | None
    ) -> Failed | None:
        """The index's distributions: from a dependency layer where the
        backend keeps them and the stack makes them (layer_steps.py), else
        installed here. A set with a dependency head named by URL is never
        layered (its file is head's choice, not the index's)."""
        if self.layers is not None and deps.layer is not None:
            if not resolved.direct:
                used = await self.layers.install(workspace, deps, deps.layer, resolved, env, built)
                if used is not None:  # else the backend could not keep one now: installed here
                    return used if isinstance(used, Failed) else None
            else:
                self.layers.notes.append(
                    f"no dependency layer: {', '.join(resolved.direct)} named by URL, "
                    "installed in the gate's own environment"
                )
        result = await self.run(workspace, deps.pinned_command(deps.pinned, resolved), env, True)
        return None if result.ok else Failed(deps.pinned, result)

    async def check(self, workspace: Workspace, mode: str, verify: bool) -> Failed | list[str]:
        """The stack's environment check: what it refused (when verifying),
        else the names of head's own projects it found. `own`: only head's
        own project and the tree's may be installed yet."""
        check = self.profile.install.environment_check
        if check is None:
            return []
        name = f"environment-{mode}.json"
        command = check.command.replace("{report}", shlex.quote(workspace.report_path(name)))
        env = dict(check.env)
        deps = self.profile.install.dependencies
        shown = self.layers.shown_to(workspace) if self.layers is not None else ""
        if shown and deps is not None and deps.layer is not None:
            env[deps.layer.link_env] = shown  # the one link no RECORD lists that the check accepts
        result = await self.run(workspace, command.replace("{mode}", mode), env, False)
        raw = await workspace.read_report(name) if result.ok else None
        data = _report(raw)
        if data is None:
            return Failed(
                check.command,
                None,
                f"the environment the install left could not be checked "
                f"({result.describe_end()}): {telling_line(result.output_tail)}",
            )
        summary, own, hex_records = data
        if hex_records and self.layers is not None and mode == "all":
            _note_hex(self.layers.notes, hex_records)
        self.offered = offered(raw) if mode == "all" else self.offered
        return Failed(check.command, None, summary) if summary and verify else own


async def _fingerprint(run: Run, workspace: Workspace, own: OwnInstall, when: str) -> Failed | dict[str, str]:
    name = f"fingerprint-{when}.json"
    script = own.fingerprint
    command = script.command.replace("{report}", shlex.quote(workspace.report_path(name)))
    result = await run(workspace, command, dict(script.env), False)
    found = read_fingerprint(await workspace.read_report(name)) if result.ok else None
    if found is None:
        return Failed(
            own.label,
            None,
            f"the environment could not be fingerprinted ({result.describe_end()}): {telling_line(result.output_tail)}",
        )
    return found


def loads(installer: Installer) -> RunPlugin | None:
    """What every test run of an install loads: the runner's plugins the
    last check of its whole environment found verified (none where it
    found none); None where the profile leaves it to the runner."""
    check = installer.profile.install.environment_check
    return None if check is None or check.loads is None else check.loads(installer.offered or Offered())


async def linted(installer: Installer, workspace: Workspace, env: dict[str, str]) -> Failed | None:
    """The profile's lint (stacks/lint.py), last, with the install's
    variables: its findings kept in the installer's `found` for the caller
    to judge against base's; a lint that could not check fails the install
    as a step does."""
    lint = installer.profile.install.lint
    if lint is None:
        return None
    command = lint.command.replace("{report}", shlex.quote(workspace.report_path(lint.report)))
    result = await installer.run(workspace, command, env, True)
    if not result.ok:
        return Failed(lint.label, result)
    try:
        installer.found = Counter(lint.read(await workspace.read_report(lint.report), workspace.path))
    except ReportProblem as err:
        return Failed(lint.label, None, str(err))
    return None


async def resolve_installed(
    run: Run, workspace: Workspace, deps: Dependencies, env: dict[str, str], own: str
) -> Resolved | Failed:
    """The resolve from head's installed project `own`, read."""
    resolve = deps.resolve.replace("{own}", own)
    result = await run(
        workspace,
        resolve.replace("{report}", shlex.quote(workspace.report_path(RESOLVED))),
        {**env, **deps.resolve_env},
        True,
    )
    if not result.ok:
        return Failed(deps.resolve, result)
    try:
        return deps.read(await workspace.read_report(RESOLVED), workspace.path, own)
    except ReportProblem as err:
        return Failed(deps.resolve, None, str(err))


def _note_dropped(notes: list[str], resolved: Resolved) -> None:
    """Say which release of head's own project the resolve gave and the
    install left out (Resolved.dropped): head's tree is what the runs test."""
    for release in resolved.dropped:
        notes.append(
            f"not installed: {release} from the index, a release of head's own project that a "
            "requirement named (it would shadow head's tree, which is installed)"
        )


def _note_hex(notes: list[str], hex_records: list[str]) -> None:
    """Say once per run which distributions' RECORDs are non-conforming."""
    note = (
        f"non-conforming RECORD: {', '.join(hex_records)} write their digests in hex, not the wheel "
        "spec's urlsafe base64; compared as the same bytes"
    )
    if note not in notes:
        notes.append(note)


def offered(raw: bytes | None) -> Offered:
    """The runner's plugins and version the environment check found the
    verified distributions offer; nothing where its report says nothing
    readable of them (then the runs load no plugin)."""
    try:
        data = json.loads(raw or b"")
    except ValueError:
        return Offered()
    plugins, runner = (data.get("plugins"), data.get("runner")) if isinstance(data, Mapping) else (None, None)
    if not isinstance(plugins, list) or not isinstance(runner, str):
        return Offered()
    found = tuple(
        OfferedPlugin(p["name"], p["dist"], p["own"])
        for p in plugins
        if isinstance(p, Mapping)
        and isinstance(p.get("name"), str)
        and isinstance(p.get("dist"), str)
        and p.get("own") in (True, False)
    )
    return Offered(found, runner)


def _report(raw: bytes | None) -> tuple[str, list[str], list[str]] | None:
    """The environment check's summary, head's own projects, and the
    distributions whose RECORD spells its digests in hex."""
    try:
        data = json.loads(raw or b"")
    except ValueError:
        return None
    if not isinstance(data, Mapping):
        return None
    summary, own, hex_records = data.get("summary"), data.get("own", []), data.get("hex_records", [])
    if not isinstance(summary, str) or not isinstance(own, list) or not isinstance(hex_records, list):
        return None
    return summary, [str(name) for name in own], [str(name) for name in hex_records]


# A line that says why a command failed: an error's name (Python's
# `ValueError:`, node's `Error: EROFS`, npm's `npm error`, go's `fatal` or
# `checksum mismatch`).
SAYS_WHY = re.compile(r"(?i:error|fatal|panic|mismatch)\b")


def telling_line(text: str) -> str:
    """The line of a failed command's output a person reads first: the
    first of the last run of lines that name an error (npm's block ends on
    where its log is; what follows it, a stack trace's frames, a version
    banner, says less), else the last line. Written here: no library
    picks the line that says why from a tool's output."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # a banner in capitals (go's `SECURITY ERROR`) says less than the line it heads
    telling = [i for i, line in enumerate(lines) if SAYS_WHY.search(line) and not line.isupper()]
    if not telling:
        return lines[-1][:300] if lines else "no output"
    first = telling[-1]
    while first - 1 in telling:
        first -= 1
    return lines[first][:300]
