"""One run of the suite in one workspace: the command filled in for the
workspace, the gate's own files written beside the tree, the report read
the way the profile's runner writes it."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping

from gatetui.backends.base import CommandResult, Workspace
from gatetui.gate.checks import CheckId
from gatetui.gate.judging import refused_start
from gatetui.gate.judging.results import SuiteRun
from gatetui.gate.phases.context import Context
from gatetui.gate.reports.junit import Report, ReportError, parse_junit
from gatetui.stacks.base import RunPlugin, RunTree


class SuiteRunner:
    def __init__(self, ctx: Context):
        self.ctx = ctx

    async def run(
        self,
        workspace: Workspace,
        check: CheckId,
        name: str,
        extra_env: dict[str, str],
        test: str | None = None,
        ran: RunTree | None = None,
        timeout: float | None = None,
        loads: RunPlugin | None = None,
    ) -> SuiteRun:
        """One run of the suite in `workspace`, whose tree is `ran` (head's by
        default), within `timeout` seconds (the plan's by default), loading
        the runner plugins `loads` names (head's environment's by default)."""
        report_name = f"{name.replace(' ', '-')}.xml"
        path = shlex.quote(workspace.report_path(report_name))
        profile = self.ctx.plan.profile
        if profile.suite.files:
            await workspace.write_files(self._in_gate_folder(profile.suite.files))
        loads = loads or self.ctx.loads
        loaded = await self.plugin(workspace, loads) if loads is not None else {}
        command = (test or profile.suite.command).replace("{report}", path)
        env = self._env(workspace, path, joined_env(loaded, extra_env))
        result = await self.ctx.ledger.run(
            workspace, check, name, command, env, network=self.ctx.plan.policy.test_network, timeout=timeout
        )
        raw = await workspace.read_report(report_name)
        if raw is None:
            return SuiteRun(name, result, None, self._no_report(name, result))
        try:
            report = self._read_report(raw, workspace.path, ran or RunTree(self.ctx.plan.head))
        except ReportError as err:
            return SuiteRun(name, result, None, str(err))
        return SuiteRun(name, result, report)

    async def command(
        self, workspace: Workspace, check: CheckId, name: str, command: str, timeout: float
    ) -> CommandResult:
        """A command of the gate's own (no runner, no report), in the
        environment the tests run in: the same interpreter, paths and
        variables as run 2's."""
        profile = self.ctx.plan.profile
        if profile.suite.files:
            await workspace.write_files(self._in_gate_folder(profile.suite.files))
        env = self._env(workspace, shlex.quote(workspace.report_path(f"{name.replace(' ', '-')}.xml")), {})
        return await self.ctx.ledger.run(
            workspace, check, name, command, env, network=self.ctx.plan.policy.test_network, timeout=timeout
        )

    def _env(self, workspace: Workspace, report: str, extra_env: dict[str, str]) -> dict[str, str]:
        """The profile's test environment filled in for this workspace, with
        `extra_env` added (PYTHONPATH joined as a path, the rest as words)."""
        places = {
            "{report}": report,
            "{gate}": self.gate_path(workspace),
            "{scratch}": workspace.scratch_path("cache"),
            "{bytecode}": workspace.scratch_path("bytecode"),
            "{tree}": workspace.path.rstrip("/"),
        }
        env = {k: _fill(v, places) for k, v in self.ctx.plan.profile.suite.env.items()}
        env.update(self.ctx.lock_env(workspace))
        return joined_env(env, extra_env)

    def _no_report(self, name: str, result: CommandResult) -> str:
        """Why a run left no report: a runner that would not start says so in its own words."""
        if refused_start.refused([SuiteRun(name, result, None)], self.ctx.plan.profile.suite.cannot_start):
            return f"the runner would not start: {refused_start.runners_words(result.output_tail)}"
        return "no report written"

    def _read_report(self, raw: bytes, root: str, ran: RunTree) -> Report:
        """The run's report, read the way the profile's runner writes it."""
        profile = self.ctx.plan.profile
        if profile.reports.read is not None:
            return profile.reports.read(raw, root, ran)
        report = parse_junit(raw, root=root, ids=profile.reports.ids)
        return report if profile.reports.check is None else profile.reports.check(report, ran)

    async def plugin(self, workspace: Workspace, plugin: RunPlugin, **values: object) -> dict[str, str]:
        """Write a runner plugin's files into the run's gate folder; the
        environment that loads it."""
        await workspace.write_files(self._in_gate_folder(plugin.files))
        return plugin.env_for(self.gate_path(workspace), **values)

    def old_tests_env(self) -> dict[str, str]:
        """Base's tests run with base's runner settings and without any
        runner plugin head's package added (the stack's hook scan says how)."""
        env = dict(self.ctx.plan.old_tests_env)
        for key, value in self.ctx.hooks.old_tests_env.items():
            env[key] = f"{env.get(key, '')} {value}".strip()
        return env

    def gate_path(self, workspace: Workspace) -> str:
        return f"{workspace.path.rstrip('/')}/{self.ctx.gate_folder}"

    def _in_gate_folder(self, files: Mapping[str, bytes]) -> dict[str, bytes | None]:
        return {f"{self.ctx.gate_folder}/{rel}": data for rel, data in files.items()}


def joined_env(first: Mapping[str, str], then: Mapping[str, str]) -> dict[str, str]:
    """Two sets of a run's variables as one, `first`'s words before
    `then`'s (PYTHONPATH joined as a path): the runner's plugins are named
    before the gate's own plugins of the run are."""
    out = dict(first)
    for key, value in then.items():
        joint = os.pathsep if key == "PYTHONPATH" else " "
        out[key] = f"{out[key]}{joint}{value}" if key in out else value
    return out


def _fill(value: str, places: Mapping[str, str]) -> str:
    for mark, place in places.items():
        value = value.replace(mark, place)
    return value
