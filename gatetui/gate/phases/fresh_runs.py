"""The fresh processes that confirm a rerun failure (gate/judging/fresh.py), in run
1's copy after its reruns: each test alone, one process at a time, up to
fresh.PROCESSES and stopped at the first that does not pass; then, when
every one passed, one process repeating it with the rerun plugin (every
other case with its test module loaded afresh). Their output is not kept,
as the reruns' is not: they are judged by their reports."""

from __future__ import annotations

from gatetui.backends.base import Workspace
from gatetui.gate.checks import CheckId
from gatetui.gate.judging import fresh, reruns
from gatetui.gate.judging.results import SuiteRun
from gatetui.gate.phases.context import Context
from gatetui.gate.phases.one_run import SuiteRunner
from gatetui.gate.reports import junit


class FreshRuns:
    def __init__(self, ctx: Context, runner: SuiteRunner):
        self.ctx, self.runner = ctx, runner
        self.started = 0  # fresh processes so far: each its own stream and report

    async def confirm(self, workspace: Workspace, failed: dict[str, int]) -> tuple[fresh.Confirmation, ...]:
        """The tests that failed the reruns (by how many times), confirmed
        or cleared: one case of each of the first fresh.MAX_TESTS test
        functions (fresh.representatives), its answer standing for its
        function's other failed cases."""
        chosen = fresh.representatives(failed)
        found = {test: await self._one(workspace, test) for test in chosen.values()}
        return tuple(
            fresh.Confirmation(test, found[chosen[reruns.function_of(test)]].cause)
            for test in failed
            if reruns.function_of(test) in chosen
        )

    async def _one(self, workspace: Workspace, test: str) -> fresh.Confirmation:
        alone: list[junit.Report | None] = []
        while len(alone) < fresh.PROCESSES and all(fresh.alone_passed(r, test) for r in alone):
            alone.append(await self._run(workspace, test, {}))
        if not all(fresh.alone_passed(r, test) for r in alone):
            return fresh.confirm(test, alone, None)
        plugin = self.ctx.plan.profile.suite.rerun
        assert plugin is not None  # reruns, and so their failures, come only from a profile's plugin
        # the function's id on the command line, the one case wanted picked by the plugin
        env = await self.runner.plugin(
            workspace,
            plugin,
            reruns=fresh.STEPS,
            afresh=",".join(map(str, fresh.AFRESH)),
            only=test.rsplit("::", 1)[-1],
        )
        return fresh.confirm(test, alone, await self._run(workspace, reruns.function_of(test), env))

    async def _run(self, workspace: Workspace, test: str, env: dict[str, str]) -> junit.Report | None:
        """One fresh process running `test`; its report, None when it has
        none or hit its time limit."""
        self.started += 1
        command = reruns.command(self.ctx.plan.profile.suite.command, [test])
        run: SuiteRun = await self.runner.run(workspace, CheckId.RUNS, f"fresh {self.started}", env, command)
        return None if run.result.timed_out else run.report
