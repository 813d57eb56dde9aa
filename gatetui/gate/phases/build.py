"""The build phase: head installed from scratch in a fresh workspace, its
distributable built beside it, the environment checked where the runs
will see it before it is handed on, and the profile's lint judged against
base's findings (lint.py). Only the environment goes on; the
workspace takes no command after its first fork."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import Sequence

from gatetui.backends.base import Workspace, close_all
from gatetui.errors import BackendError
from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.diff.refusals import refusal
from gatetui.gate.events import DigestsComputed
from gatetui.gate.install.build_tools import tools_swaps
from gatetui.gate.install.early_layer import EarlyResolve
from gatetui.gate.install.steps import Failed, Installer, loads, telling_line
from gatetui.gate.phases import blame, lint
from gatetui.gate.phases.context import Context
from gatetui.stacks.base import BuildCheck

STREAM = "install"
SOURCE = "build-source.tar"  # the tree as the commit made it, kept for the build beside the install


class BuildPhase:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.opened: Workspace | None = None  # the install's workspace until it is handed on
        self.installer = ctx.installer(CheckId.INSTALL, STREAM)  # holds what the environment must be

    async def install(self) -> Workspace | None:
        """The installed workspace, or None when the install check failed
        (its workspace stays `opened`, for the caller to close)."""
        ctx = self.ctx
        ctx.ledger.start(CheckId.INSTALL)
        refused = refusal(ctx.plan.base, ctx.plan.head, ctx.plan.profile.install.unreadable_code)
        if refused:
            ctx.ledger.finish(CheckResult(CheckId.INSTALL, Status.FAIL, refused))
            return None
        workspace = self.opened = await ctx.backend.open(ctx.export_head, ctx.plan.request.run_id)
        ctx.layer_of_head = workspace.path
        failed, findings = await self._install_and_build(workspace)
        if ctx.digests() != ctx.plan.digests:  # the dependency layer the install used, named
            ctx.ledger.emit(DigestsComputed(ctx.digests()))
        if failed is None:
            failed = await hand_on(ctx, workspace, self.installer)
        if failed is not None:
            ctx.ledger.finish(await blame.install_failed(ctx, failed))
            return None
        linted = await lint.judge(ctx, self.installer.found)  # the profile's lint, against base's findings
        if linted.failed:
            ctx.ledger.finish(CheckResult(CheckId.INSTALL, Status.FAIL, linted.said))
            return None
        ctx.ledger.finish(self._passed(findings, linted.said))
        ctx.loads = loads(self.installer)  # the plugins the check verified, for every run of this environment
        self.opened = None  # the caller's now
        return workspace

    async def _install_and_build(self, workspace: Workspace) -> tuple[Failed | None, Sequence[object]]:
        """The install, and beside it the wheel (judged only when the
        install went through)."""
        build, installer = self.ctx.plan.profile.install.build_check, self.installer
        wheel = None
        await installer.prepare(workspace)  # the workspace's first command is still to come
        if build is not None:
            copied = await copy_source(self.ctx, workspace, build)  # before the install writes the tree
        installer.early = self._early(workspace)
        try:
            await self._build_tools(workspace)
            if build is not None:
                command = installer.swaps.get(build.command, build.command)
                wheel = asyncio.create_task(build_wheel(self.ctx, workspace, build, copied, command))
            failed = await self.installer.install(workspace, verify=True)
            findings = await wheel if wheel is not None and failed is None else []
        finally:
            if wheel is not None and not wheel.done():  # the install failed: its wheel is not judged
                wheel.cancel()
                with contextlib.suppress(asyncio.CancelledError, BackendError, OSError):
                    await wheel
            if installer.early is not None:
                await installer.early.stop()
        return failed, findings

    def _early(self, workspace: Workspace) -> EarlyResolve | None:
        """The resolve and the layer from what head's tree declares, started
        now, beside head's build (gate/install/early_layer.py)."""
        deps, ctx = self.ctx.plan.profile.install.dependencies, self.ctx
        if deps is None or deps.declared is None:
            return None
        files = {f: data for f in deps.declared.files if (data := ctx.plan.head.read(f)) is not None}
        early = EarlyResolve(
            deps, self.installer.run, ctx.layers, files, ctx.plan.profile.install.env, ctx.plan.version
        )
        early.start(workspace)
        return early

    async def _build_tools(self, workspace: Workspace) -> None:
        """Head's builds against the layer of the tools they declare, where
        there is one (gate/install/build_tools.py), before the first of them."""
        tools, layers, files = self.ctx.plan.profile.layers.build_tools, self.ctx.layers, self.installer.tool_files
        if tools is not None and layers is not None and files is not None:
            env = dict(self.ctx.plan.profile.install.env)
            self.installer.swaps = await tools_swaps(layers, workspace, tools, files, env)

    def _passed(self, findings: Sequence[object], linted: str) -> CheckResult:
        """`linted`: what the lint found that base has too, told ("" for none)."""
        build, also = self.ctx.plan.profile.install.build_check, f"; {linted}" if linted else ""
        if findings and build is not None:
            return CheckResult(CheckId.INSTALL, Status.REVIEW, build.describe(findings) + also)
        return CheckResult(CheckId.INSTALL, Status.PASS, "fresh copy, fresh environment" + also)


async def copy_source(ctx: Context, workspace: Workspace, build: BuildCheck) -> str:
    """The tree kept for the build as the commit made it; what went wrong
    in one phrase, else ""."""
    command = build.copy.replace("{source}", shlex.quote(workspace.report_path(SOURCE)))
    result = await ctx.ledger.run(workspace, CheckId.INSTALL, "wheel", command, {})
    if not result.ok:
        return f"{build.label} could not be built (the tree could not be copied: {result.describe_end()})"
    return ""


async def build_wheel(
    ctx: Context, workspace: Workspace, build: BuildCheck, copied: str, command: str
) -> Sequence[object]:
    """Head's distributable, built beside the install in the same
    workspace (where head's build code runs anyway, before the first
    fork) from the copy taken before it, then compared with the commit:
    what users install must be what the runs tested. `copied`: what went
    wrong keeping the copy; `command`: the build's (the profile's, or its
    swap while the build tools layer is shown)."""
    if copied:
        return [copied]
    profile = ctx.plan.profile
    command = command.replace("{report}", shlex.quote(workspace.report_path(build.report))).replace(
        "{source}", shlex.quote(workspace.report_path(SOURCE))
    )
    result = await ctx.ledger.run(workspace, CheckId.INSTALL, "wheel", command, dict(profile.install.env))
    if not result.ok:
        return [f"{build.label} could not be built ({result.describe_end()}): {telling_line(result.output_tail)}"]
    built = await workspace.read_report(build.report)
    if built is None:
        return [f"{build.label} was built but left no file to read"]
    return await asyncio.to_thread(build.findings, built, ctx.plan.head, profile.install.build_generated)


async def hand_on(ctx: Context, workspace: Workspace, installer: Installer) -> Failed | None:
    """The environment is checked where the runs will see it: in a copy
    no code of head's has run in yet (every fork hands on the same
    environment, and on Runtime the install's machine, where head's code
    ran, is trusted for nothing). Then head's packages are imported in
    that copy: importing runs head's code, which must not get to write
    the environment either."""
    check, modules = ctx.plan.profile.install.environment_check, ctx.plan.import_modules
    if check is None and not modules and installer.expected is None:
        return None
    (copy,) = await workspace.fork(1, ctx.export_head, ctx.plan.profile.install.environment)
    try:
        if check is not None:
            refused = await installer.check(copy, "all", verify=True)
            if isinstance(refused, Failed):
                return refused
        failed = await installer.same_environment(copy)
        return failed if failed is not None else await _import(ctx, copy, modules)
    finally:
        await close_all([copy])


async def _import(ctx: Context, copy: Workspace, modules: tuple[str, ...]) -> Failed | None:
    """Head's packages imported in the checked copy: a failure is head's own."""
    importer = ctx.plan.profile.install.import_command
    if not modules or importer is None:
        return None
    command = importer.command.replace("{modules}", shlex.join(modules)).replace(
        "{bytecode}", copy.scratch_path("bytecode")
    )
    result = await ctx.ledger.run(copy, CheckId.INSTALL, STREAM, command, dict(importer.env), network=False)
    return None if result.ok else Failed(f"import {', '.join(modules)}", result, heads_own=True)
