"""The suite phase: copies of the installed workspace, each a fresh export
of head with only the install's environment, run side by side: head's suite
three times (with `random_order`, the first reversed or each test alone as
the stack declares, the third in a random order; run 1 followed
by reruns of the tests head added or changed and fresh processes for those
failing there, run 2 measuring which test runs each changed line), base's
tests over head's code, and the hidden tests when a check still needs them.
Which copies are made follows what the open checks declare they need. Then
the mutants of the changed lines (`bites`), on copies of their own."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import replace

from gatetui.backends.base import CommandResult, Workspace, close_all
from gatetui.gate.checks import CheckId, Need, Phase, announced_at
from gatetui.gate.diff.changed_tests import ChangedTests
from gatetui.gate.events import OutputChunk
from gatetui.gate.judging import hidden_time, random_order, reruns
from gatetui.gate.judging.hidden import STREAM as HIDDEN_STREAM
from gatetui.gate.judging.hidden import hidden_command, judge_hidden
from gatetui.gate.judging.results import SuiteRun
from gatetui.gate.phases import suite_checks
from gatetui.gate.phases.base_own import BaseOwn
from gatetui.gate.phases.bites import BitesPhase
from gatetui.gate.phases.context import Context
from gatetui.gate.phases.coverage import MEASURED_RUN, CoverageRun
from gatetui.gate.phases.fresh_runs import FreshRuns
from gatetui.gate.phases.one_run import SuiteRunner
from gatetui.stacks.base import RunTree

RUNS = 3  # head's suite, this often: a test that fails in some and not others is flaky


class SuitePhase:
    def __init__(self, ctx: Context, runner: SuiteRunner, base: BaseOwn):
        self.ctx, self.runner, self.base = ctx, runner, base
        self.coverage = CoverageRun(ctx, runner)
        self.bites = BitesPhase(ctx, runner, self.coverage)
        self.fresh = FreshRuns(ctx, runner)
        self._hidden_limit: float | None = None  # seconds the hidden run may take, once head's runs are done

    async def run(self, workspace: Workspace) -> None:
        """Every run side by side on copies of `workspace`, then what they say."""
        ctx = self.ctx
        hidden = Need.HIDDEN_TESTS in {need for spec in ctx.ledger.open() for need in spec.needs}
        # each run a fresh export of head: of the install, only the environment
        copies = await workspace.fork(
            RUNS + 1 + hidden,
            ctx.export_head,
            ctx.plan.profile.install.environment,
            network=ctx.plan.policy.test_network,
        )
        try:
            done = await self._side_by_side(copies, hidden)
        finally:
            await close_all(copies)
        if hidden:
            assert ctx.plan.hidden is not None  # needed only when configured and found (plan_phase.hidden)
            ctx.ledger.finish(judge_hidden(done[RUNS + 1], ctx.plan.hidden, self._hidden_limit))
        await suite_checks.judge_suite(ctx, self.base, done[:RUNS], done[RUNS])
        await self.bites.run(workspace, done[:RUNS])

    async def _side_by_side(self, copies: list[Workspace], hidden: bool) -> list[SuiteRun]:
        """Head's runs, then base's tests, then the hidden tests, one copy each."""
        await copies[RUNS].write_files(self.ctx.plan.old_tests_files)
        self._announce()
        jobs = [self._head_run(w, i) for i, w in enumerate(copies[:RUNS])]
        jobs.append(self._old_tests_run(copies[RUNS]))
        if not hidden:
            return list(await asyncio.gather(*jobs))
        started = time.monotonic()
        hidden_job = asyncio.ensure_future(self._hidden_run(copies[RUNS + 1]))
        try:
            visible = list(await asyncio.gather(*jobs))
        except BaseException:
            hidden_job.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await hidden_job
            raise
        return [*visible, await self._bounded(hidden_job, started, visible)]

    async def _bounded(self, job: asyncio.Future[SuiteRun], started: float, visible: list[SuiteRun]) -> SuiteRun:
        """The hidden run, stopped once it has run longer than head's runs
        allow (gate/judging/hidden_time.py): its time is all the agent could learn."""
        results = [run.result for run in visible]
        self._hidden_limit = limit = hidden_time.bound(results)
        done, _ = await asyncio.wait({job}, timeout=max(0.0, started + limit - time.monotonic()))
        if job in done:
            run = job.result()
        else:
            job.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await job
            stopped = CommandResult(None, time.monotonic() - started, timed_out=True, limit_seconds=limit)
            run = SuiteRun(HIDDEN_STREAM, stopped, None, hidden_time.NOT_PASSED)
        if hidden_time.over(run.result, limit):
            self.ctx.ledger.emit(
                OutputChunk(CheckId.HIDDEN, HIDDEN_STREAM, hidden_time.why(run.result, limit, results))
            )
        return run

    def _announce(self) -> None:
        ctx = self.ctx
        for spec in announced_at(Phase.SUITE):
            ctx.ledger.start(spec.id)
        profile = ctx.plan.profile
        if ctx.plan.policy.random_order and ctx.plan.digests.random_seed is None:
            ctx.ledger.progress(
                CheckId.RUNS,
                f"random_order: {profile.suite.runner} runs cannot be shuffled"
                + (
                    f"; run 1 goes {profile.suite.reorder.label}"
                    if profile.suite.reorder is not None
                    else " and keep their order"
                ),
            )

    async def _head_run(self, workspace: Workspace, index: int) -> SuiteRun:
        """Run `index + 1`; the random-order one gets the plugin and its seed."""
        seed = self.ctx.plan.digests.random_seed
        if index == 0:
            return await self._first_run(workspace)
        name = f"run {index + 1}"
        if index == MEASURED_RUN:
            env = await self.coverage.env(workspace)
            run = await self.runner.run(workspace, CheckId.RUNS, name, env)
            await self.coverage.read(workspace)
            return run
        if seed is None or index != random_order.RUN_INDEX:
            return await self.runner.run(workspace, CheckId.RUNS, name, {})
        shuffle = self.ctx.plan.profile.suite.shuffle
        assert shuffle is not None  # the plan draws a seed only for a runner that shuffles
        env = await self.runner.plugin(workspace, shuffle, seed=seed)
        return replace(await self.runner.run(workspace, CheckId.RUNS, name, env), seed=seed)

    async def _first_run(self, workspace: Workspace) -> SuiteRun:
        """Run 1 (out of source order with random_order: `_reordered`),
        then in its copy the reruns of the tests head added or changed (see
        gate/judging/reruns.py), in source order, and fresh processes for those that
        failed there (gate/judging/fresh.py)."""
        plan = self.ctx.plan
        run = (
            await self._reordered(workspace)
            if plan.policy.random_order and plan.profile.suite.reorder is not None
            else await self.runner.run(workspace, CheckId.RUNS, "run 1", {})
        )
        ids = (
            reruns.targets(run.report, ChangedTests(plan.base, plan.head))
            if run.report is not None and plan.profile.suite.rerun is not None
            else []
        )
        if not ids or plan.profile.suite.rerun is None:
            return run
        env = await self.runner.plugin(workspace, plan.profile.suite.rerun, reruns=reruns.RERUNS, afresh="", only="")
        again = await self.runner.run(
            workspace, CheckId.RUNS, "reruns", env, reruns.command(plan.profile.suite.command, ids)
        )
        failed = reruns.failures(again.report) if again.report is not None and not again.result.timed_out else {}
        if not run.passed and not plan.policy.baseline:
            return replace(run, reruns=again)  # runs fails already: what the reruns say changes nothing
        return replace(run, reruns=again, confirmed=await self.fresh.confirm(workspace, failed))

    async def _reordered(self, workspace: Workspace) -> SuiteRun:
        """Run 1 in the order the stack declares (stacks/order.py): a test
        that passes only after another fails here every time. Run 1, not
        run 2: coverage (run 2) and the mutants that replay it keep the
        source order, where each test reaches the lines it reaches for a
        user."""
        reorder = self.ctx.plan.profile.suite.reorder
        assert reorder is not None
        env = await self.runner.plugin(workspace, reorder.plugin)
        return replace(await self.runner.run(workspace, CheckId.RUNS, "run 1", env), order=reorder.label)

    async def _old_tests_run(self, workspace: Workspace) -> SuiteRun:
        """Base's tests (base's sealed files, written over this copy) on head's code."""
        plan = self.ctx.plan
        return await self.runner.run(
            workspace,
            CheckId.OLD_TESTS,
            "old tests",
            self.runner.old_tests_env(),
            ran=RunTree(plan.head, plan.old_tests_files),
        )

    async def _hidden_run(self, workspace: Workspace) -> SuiteRun:
        """The hidden tests over base's sealed files (head's conftest.py and
        pytest settings cannot drop them), their output on its own stream."""
        plan = self.ctx.plan
        assert plan.hidden is not None
        self.ctx.ledger.time_from_now(CheckId.HIDDEN)  # announced with the plan, timed from here
        over = {**plan.old_tests_files, **plan.hidden.files}
        await workspace.write_files(over)
        command = hidden_command(plan.profile.suite.command, plan.hidden)
        return await self.runner.run(
            workspace, CheckId.HIDDEN, HIDDEN_STREAM, self.runner.old_tests_env(), command, RunTree(plan.head, over)
        )
