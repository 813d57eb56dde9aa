"""The resolve and the dependency layer, started beside head's build.

The resolve starts from head's installed project, so the dependency layer
waited for head's build: a cold gate built its layer after head's project
was in, one step after another. Where the stack can read head's own
requirements from what the tree declares (Dependencies.declared: a
pyproject.toml whose `dependencies` are not dynamic), they are resolved in
the install's workspace while head's project builds, and the layer of that
set is found or built meanwhile (in a workspace of its own, where no code
of head's runs, as ever). When head's project is in, the install takes
both, then shows and links the layer as before. A head whose installed
project is not the one the tree declared (by name), or a resolve that
failed here, is resolved from the installed project as before: nothing is
judged from this step alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

from gatetui.backends.base import LayerUnavailable, Workspace
from gatetui.gate.install.layers import Built, LayerSteps
from gatetui.gate.install.steps import Run
from gatetui.stacks.base import Dependencies, ReportProblem, Resolved

REPORT = "resolved-declared.json"


@dataclass(frozen=True)
class Early:
    own: str  # head's project's name, as declared
    resolved: Resolved
    built: Built | None  # the set's layer, found or built; None: no layer for it (named by URL, none kept)


class EarlyResolve:
    """One install's early resolve: started once, taken once."""

    def __init__(
        self,
        deps: Dependencies,
        run: Run,
        layers: LayerSteps | None,
        files: Mapping[str, bytes],
        env: Mapping[str, str],
        version: str = "0",
    ):
        self.deps, self.run, self.layers, self.files, self.env = deps, run, layers, files, dict(env)
        self.version = version  # the one handed the build, where it takes it from git
        self.task: asyncio.Task[Early | None] | None = None

    def start(self, workspace: Workspace) -> None:
        declared = self.deps.declared
        found = declared.metadata(self.files, self.version) if declared is not None else None
        if found is not None:
            self.task = asyncio.create_task(self._resolve(workspace, *found))

    async def taken(self, own: str) -> Early | None:
        """What was resolved for `own` (head's project as installed); None:
        resolve from the installed project as before."""
        if self.task is None:
            return None
        try:
            early = await self.task
        except Exception:  # noqa: BLE001 - the usual resolve runs instead, and says what fails there
            return None
        declared = self.deps.declared
        same = early is not None and declared is not None and declared.canonical(early.own) == declared.canonical(own)
        return early if same else None

    async def stop(self) -> None:
        """Cancelled where the install ended before taking it; its end
        retrieved either way (an exception left in a task keeps what it
        referenced, the run's repository among them, until it is collected)."""
        if self.task is None:
            return
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.task
        self.task = None

    async def _resolve(self, workspace: Workspace, name: str, metadata: str) -> Early | None:
        declared, deps = self.deps.declared, self.deps
        assert declared is not None  # started only with one
        command = declared.command.replace("{own}", name).replace(
            "{report}", shlex.quote(workspace.report_path(REPORT))
        )
        env = {**self.env, **deps.resolve_env, declared.variable: metadata}
        result = await self.run(workspace, command, env, True)
        if not result.ok:
            return None
        try:
            resolved = deps.read(await workspace.read_report(REPORT), workspace.path, name)
        except ReportProblem:
            return None  # the usual resolve runs, and says what is wrong with its report
        built: Built | None = None
        if self.layers is not None and deps.layer is not None and resolved.pinned and not resolved.direct:
            try:
                built = await self.layers.layer_for(workspace, deps, deps.layer, resolved, self.env)
            except LayerUnavailable as err:
                built = err
        return Early(name, resolved, built)
