"""What every phase of one gate run shares: the plan, the backend, the
ledger, what the stack's hook scan found, and the gate's folder name."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from gatetui.backends.base import Backend, CommandResult, Workspace, close_all
from gatetui.gate.checks import CheckId
from gatetui.gate.diff import changed_code
from gatetui.gate.diff.changed_code import ChangedCode
from gatetui.gate.install.layers import LayerSteps
from gatetui.gate.install.steps import Installer, Run
from gatetui.gate.phases.ledger import Ledger
from gatetui.gate.plan import Plan
from gatetui.gate.sealing.digests import Digests
from gatetui.git.snapshot import Snapshot
from gatetui.stacks.base import HookScan, RunPlugin


def _changed(plan: Plan) -> ChangedCode | None:
    probe = plan.profile.lines.coverage
    if probe is None:
        return None
    sealed = plan.policy.sealed
    changes = plan.repo.changes(plan.base.sha, plan.head.sha, changed_code.wanted(plan.profile, sealed, probe))
    return changed_code.changed_code(changes, plan.profile, sealed, probe, plan.head)


def _gate_folder() -> str:
    """The gate's files in a run's tree, under a name head cannot know."""
    return f".site-{secrets.token_hex(6)}"


@dataclass
class Context:
    plan: Plan
    backend: Backend
    ledger: Ledger
    hooks: HookScan
    changed: ChangedCode | None = None  # the library lines head changed; None: the stack cannot measure
    gate_folder: str = field(default_factory=_gate_folder)
    outside: list[str] = field(default_factory=list)  # base tests passed by a change outside the tests
    layers: LayerSteps | None = None  # the backend's dependency layers as this run uses them
    layer_of_head: str = ""  # the install workspace's path: whose layer the digests name
    loads: RunPlugin | None = None  # what every run of head's environment loads (Installer.loads)

    @classmethod
    def of(cls, plan: Plan, backend: Backend, ledger: Ledger) -> Context:
        profile = plan.profile
        ctx = cls(
            plan, backend, ledger, profile.stack.scan_hooks(plan.base, plan.head, profile.is_test_file), _changed(plan)
        )
        if backend.layers is not None:
            ctx.layers = LayerSteps(
                backend.layers,
                ctx._run_for(CheckId.INSTALL, "install"),
                lambda usage: ledger.save(CheckId.INSTALL, usage),
            )
        return ctx

    def digests(self) -> Digests:
        """The plan's digests, with the dependency layer head's install used."""
        use = self.layers.used.get(self.layer_of_head) if self.layers is not None else None
        return self.plan.digests if use is None else self.plan.digests.with_layer(use.key, use.state)

    @property
    def notes(self) -> tuple[str, ...]:
        """What this run adds to the backend's notes (a layer thrown away)."""
        return tuple(self.layers.notes) if self.layers is not None else ()

    def export_head(self, dest: Path) -> None:
        self.plan.export(self.plan.head, dest)

    def installer(self, check: CheckId, stream: str, tree: Snapshot | None = None) -> Installer:
        """The profile's install of `tree` (head's unless told), its
        commands charged to `check` on `stream`."""
        profile, tree = self.plan.profile, tree or self.plan.head
        recipe, tools = profile.layers.lock, profile.layers.build_tools
        files = None if recipe is None else {f: data for f in recipe.files if (data := tree.read(f)) is not None}
        declared = None if tools is None else {f: data for f in tools.files if (data := tree.read(f)) is not None}
        return Installer(profile, self._run_for(check, stream), self.layers, files, declared)

    def lock_env(self, workspace: Workspace) -> dict[str, str]:
        """The variables that show a run the lock layer its install used
        (none where there is none)."""
        recipe = self.plan.profile.layers.lock
        shown = self.layers.shown_to(workspace) if self.layers is not None and recipe is not None else ""
        return {k: v.replace("{layer}", shown) for k, v in recipe.env.items()} if recipe and shown else {}

    def _run_for(self, check: CheckId, stream: str) -> Run:
        async def run(workspace: Workspace, command: str, env: dict[str, str], network: bool) -> CommandResult:
            return await self.ledger.run(workspace, check, stream, command, env, network=network)

        return run

    def test_file_unchanged(self, path: str) -> bool:
        base, head = self.plan.base, self.plan.head
        return path in base and path in head and base.ident(path) == head.ident(path)

    def policy_fails(self) -> bool:
        """Whether a failure declared to go to review fails the change: the
        policy says so, a sealed file changed that may not, or the evidence
        says head bent the verdict instead of changing the tests."""
        plan = self.plan
        return (
            plan.policy.on_old_tests_fail == "fail"
            or bool(plan.forbidden)
            or bool(self.hooks.findings)
            or bool(self.outside)
            or bool(plan.links_out)
        )

    @contextlib.asynccontextmanager
    async def base_workspace(self, suffix: str) -> AsyncIterator[Workspace]:
        """Base's tree in a workspace of its own, closed however the caller ends."""
        plan = self.plan
        workspace = await self.backend.open(
            lambda dest: plan.export(plan.base, dest), f"{plan.request.run_id}-{suffix}"
        )
        try:
            yield workspace
        finally:
            await close_all([workspace])
