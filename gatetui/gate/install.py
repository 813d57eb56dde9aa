"""The install, in steps that keep head's code away from what it may not vouch for.

The profile's commands run first. Where the stack installs its third-party
dependencies apart (Profile.dependencies: python), the last of them resolves
without installing; then head's own project and what lives in the tree are
installed (head's build code runs), the environment is checked to hold
nothing but theirs, and only then are the index's distributions installed,
pinned, in a step where no code of head's runs. The whole environment is
checked last. Base's installs (to tell whose a failure is, and the
baseline) take the same steps without the checks.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from gatetui.backends.base import CommandResult, Workspace
from gatetui.gate.pip_report import ReportProblem, heredoc, local_args, split
from gatetui.profiles import Profile

RESOLVED = "resolved.json"
Run = Callable[[Workspace, str, dict[str, str], bool], Awaitable[CommandResult]]


@dataclass(frozen=True)
class Failed:
    step: str  # the command as the profile names it (the same at base and head)
    result: CommandResult | None  # None: the gate refused what the steps left
    said: str = ""  # why, when the gate refused


class Installer:
    def __init__(self, profile: Profile, run: Run):
        self.profile, self.run = profile, run

    async def install(self, workspace: Workspace, verify: bool) -> Failed | None:
        """None when the workspace is installed (and, with `verify`, its
        environment may be handed on); else what failed."""
        profile, deps = self.profile, self.profile.dependencies
        env = dict(profile.install_env)
        for command in profile.install:
            shown = command.replace("{report}", shlex.quote(workspace.report_path(RESOLVED)))
            result = await self.run(workspace, shown, env, True)
            if not result.ok:
                return Failed(command, result)
        if deps is None:
            return await self.check(workspace, "all") if verify else None
        try:
            resolved = split(await workspace.read_report(RESOLVED), workspace.path)
        except ReportProblem as err:
            return Failed(profile.install[-1], None, str(err))
        steps = [(deps.local, deps.local.replace("{local}", local_args(resolved)), "own")]
        if resolved.pinned:
            steps.append((deps.pinned, heredoc(deps.pinned, resolved.pinned), "all"))
        for step, command, mode in steps:
            result = await self.run(workspace, command, env, True)
            if not result.ok:
                return Failed(step, result)
            refused = await self.check(workspace, mode) if verify else None
            if refused is not None:
                return refused
        return None

    async def check(self, workspace: Workspace, mode: str) -> Failed | None:
        """The stack's environment check; `own`: only head's own project and
        the tree's may be installed yet."""
        check = self.profile.environment_check
        if check is None:
            return None
        name = f"environment-{mode}.json"
        command = check.command.replace("{report}", shlex.quote(workspace.report_path(name)))
        result = await self.run(workspace, command.replace("{mode}", mode), dict(check.env), False)
        summary = _summary(await workspace.read_report(name)) if result.ok else None
        if summary is None:
            return Failed(check.command, None, f"the environment the install left could not be checked "
                                               f"({result.describe_end()}): {_last(result.output_tail)}")
        return Failed(check.command, None, summary) if summary else None


def _summary(raw: bytes | None) -> str | None:
    try:
        data = json.loads(raw or b"")
    except ValueError:
        return None
    summary = data.get("summary") if isinstance(data, Mapping) else None
    return summary if isinstance(summary, str) else None


def _last(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"
