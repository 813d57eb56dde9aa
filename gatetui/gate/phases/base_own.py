"""Base's own suite on base's own code, installed the same way in a
workspace of its own: the baseline (`baseline = true`: failures base
already had are tolerated), and the witness a check asks for when only base
can tell whose a finding is (tests skipped at head, a runner that would not
start). It runs at most once a gate, and a usable result is cached per base
commit and profile (a supervisor pays once per base)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from gatetui.errors import BackendError, GateError
from gatetui.gate.checks import CheckId, CheckResult
from gatetui.gate.events import BaselineInfo
from gatetui.gate.install.steps import loads
from gatetui.gate.judging import baseline, refused_start, results
from gatetui.gate.phases.context import Context
from gatetui.gate.phases.one_run import SuiteRunner
from gatetui.stacks.base import RunTree

Task = asyncio.Task[baseline.BaseRun]


class BaseOwn:
    def __init__(self, ctx: Context, runner: SuiteRunner):
        self.ctx, self.runner = ctx, runner
        self.baseline_task: Task | None = None  # asked for by base's config (baseline = true)
        self.asked: Task | None = None  # asked for by a check
        self.info = BaselineInfo(requested=ctx.plan.policy.baseline)

    def start_baseline(self) -> None:
        """With `baseline = true`, base's suite runs meanwhile, from the start."""
        if self.ctx.plan.policy.baseline:
            self.baseline_task = asyncio.create_task(self._run())

    def own(self) -> Task:
        """The baseline's task when one was asked for, else one made on first
        need (the skips check and the refused-runner check may both ask)."""
        if self.baseline_task is not None:
            return self.baseline_task
        if self.asked is None:
            self.asked = asyncio.create_task(self._run())
        return self.asked

    def stop(self) -> list[Task]:
        """Cancel what still runs (its own finally closes base's workspace);
        the caller awaits `stopped` on them once its own workspaces are closed."""
        running = [t for t in (self.baseline_task, self.asked) if t is not None and not t.done()]
        for task in running:
            task.cancel()
        return running

    @staticmethod
    async def stopped(tasks: list[Task]) -> None:
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, BackendError, OSError):
                await task

    async def judge_runs(
        self, runs: list[results.SuiteRun], old: results.SuiteRun
    ) -> tuple[list[results.SuiteRun], results.SuiteRun]:
        """`runs` judged strictly, or against base's own failures when the
        baseline is there; returns the runs as judged (told what base
        already failed)."""
        ledger = self.ctx.ledger
        base_run = await self.baseline_task if self.baseline_task is not None else None
        if base_run is None or not base_run.usable:
            if base_run is not None:
                self.info = replace(self.info, base=base_run.base, problem=base_run.problem)
                ledger.progress(CheckId.RUNS, f"baseline not used, judged strictly: {base_run.problem}")
            ledger.finish(results.with_reruns(results.judge_runs(runs), runs))
            return runs, old
        self.info = replace(
            self.info,
            used=True,
            base=base_run.base,
            cached=base_run.cached,
            known_failures=tuple(sorted(base_run.failing)),
        )
        ledger.finish(results.with_reruns(baseline.judge_runs_against(runs, base_run), runs, base_run.failing))
        return baseline.tolerate(runs, base_run), replace(old, tolerated=base_run.failing)

    async def skips_against_base(self, skips: CheckResult, runs: list[results.SuiteRun]) -> CheckResult:
        """Base's tests on head's code run head's library: a skip it raises at
        run time skips them too, so no run at head can contradict it. Base's
        own suite on base's own code can: asked for only when base's tests
        skip something on head's code."""
        ledger = self.ctx.ledger
        ledger.progress(
            CheckId.NO_NEW_SKIPS, "tests were skipped at head; asking base's own suite whether they passed there"
        )
        found = await self.own()
        if not found.usable:
            ledger.progress(CheckId.NO_NEW_SKIPS, f"base's own suite not known: {found.problem}")
            return skips
        return results.skips_against_base(runs, found.outcomes) or skips

    async def refused_at_base(self) -> str:
        """Every run at head ended before the runner started: does base's own
        suite, on base's own install, start? The answer for a person when it
        does not; "" when it does (then the change is what broke it)."""
        self.ctx.ledger.progress(
            CheckId.RUNS, "the runner would not start; trying base's own suite, to tell whose it is"
        )
        found = await self.own()  # never kept as a baseline not asked for
        if not found.refused:
            return ""
        profile = self.ctx.plan.profile
        return refused_start.explain(found.refused, profile.suite.plugin_options, profile.suite.start_fix)

    async def _run(self) -> baseline.BaseRun:
        """From the cache, or measured; a usable result is cached."""
        plan, cache = self.ctx.plan, self.ctx.plan.request.baseline_cache
        cached = baseline.BaseRun.from_json(_cache_get(cache, plan.baseline_key), plan.base.sha)
        if cached is not None:
            return cached
        found = await self._measure()
        if found.usable and cache is not None:
            # a cache that cannot be written is a miss next time, not the gate's failure
            with contextlib.suppress(OSError, ValueError, GateError):
                cache.put(plan.baseline_key, found.to_json())
        return found

    async def _measure(self) -> baseline.BaseRun:
        ctx, base = self.ctx, self.ctx.plan.base.sha
        async with ctx.base_workspace("base") as workspace:
            installer = ctx.installer(CheckId.RUNS, "baseline install", ctx.plan.base)
            failed = await installer.install(workspace, verify=False)
            if failed is not None:
                end = failed.said if failed.result is None else failed.result.describe_end()
                return baseline.BaseRun(base, {}, f"base's install `{failed.step}` {end}")
            run = await self.runner.run(
                workspace, CheckId.RUNS, "baseline", {}, ran=RunTree(ctx.plan.base), loads=loads(installer)
            )
            return baseline.BaseRun.of(base, run, ctx.plan.profile.suite.cannot_start)


def _cache_get(cache: baseline.BaselineCache | None, key: str) -> Mapping[str, Any] | None:
    """A cache that cannot be read is a miss: base's suite runs again."""
    if cache is None:
        return None
    try:
        return cache.get(key)
    except (OSError, ValueError, GateError):
        return None
