"""The gate runner: one async stream of typed events per gate run.

Diff checks answer first, before any sandbox exists. Then a fresh workspace
installs head; its copies run the suite three times (the third in a random
order with `random_order`), base's tests once and the hidden tests once,
side by side. With `baseline`, base's own suite runs meanwhile in a
workspace of its own (or comes from the caller's cache). Every command's output streams out as it arrives, and every
workspace is closed however the run ends (pass, fail, error, a consumer that
stops listening).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shlex
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from gatetui.backends.base import Backend, CommandResult, Workspace, close_all
from gatetui.errors import BackendError, GateError
from gatetui.gate import baseline, judge, random_order, rerun, start
from gatetui.gate.checks import CHECK_ORDER, DIFF_ONLY, CheckId, CheckResult, Status, decide
from gatetui.gate.cost import Cost, Usage, usage_of
from gatetui.gate.events import (
    BaselineInfo, CheckFinished, CheckProgress, CheckStarted, CostUpdated, DigestsComputed, GateEvent,
    OutputChunk, RunFinished, RunStarted,
)
from gatetui.gate.hidden import STREAM as HIDDEN_STREAM
from gatetui.gate.hidden import hidden_command, judge_hidden
from gatetui.gate.install import Failed, Installer
from gatetui.gate.refusals import refusal
from gatetui.gate.junit import Report, ReportError, parse_junit
from gatetui.gate.plan import Plan
from gatetui.stacks.base import BuildCheck, RunPlugin, RunTree

RUNS = 3
Emit = Callable[[GateEvent], None]


async def run_gate(plan: Plan, backend: Backend) -> AsyncGenerator[GateEvent, None]:
    """Yield the gate's events; the last one is RunFinished.

    Queued events are handed over without a wait each, so a flood of output
    from side-by-side runs never piles up between the gate and its consumer.
    """
    queue: asyncio.Queue[GateEvent] = asyncio.Queue()
    gate = _Gate(plan, backend, queue.put_nowait)
    task = asyncio.create_task(gate.execute())
    getter: asyncio.Future[GateEvent] | None = None
    try:
        while True:
            if not queue.empty():
                yield queue.get_nowait()
                continue
            getter = asyncio.ensure_future(queue.get())
            await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                yield getter.result()
                continue
            getter.cancel()
            while not queue.empty():
                yield queue.get_nowait()
            task.result()
            return
    finally:
        if getter is not None and not getter.done():
            getter.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


class _Gate:
    def __init__(self, plan: Plan, backend: Backend, emit: Emit):
        self.plan, self.backend, self.emit = plan, backend, emit
        self.results: dict[CheckId, CheckResult] = {}
        self.usage: dict[str, Usage] = {}
        self.started: dict[CheckId, float] = {}
        self.clock = time.monotonic()
        self.hooks = plan.profile.stack.scan_hooks(plan.base, plan.head, plan.profile.is_test_file)
        self.outside: list[str] = []  # base tests passed by a change outside the tests
        self.opened: Workspace | None = None  # the install's workspace until _install returns
        self.account: dict[str, float] = {}  # the backend account's credit, where it has one
        self.base_task: asyncio.Task[baseline.BaseRun] | None = None  # base's suite, baseline = true
        self.asked_base: asyncio.Task[baseline.BaseRun] | None = None  # base's suite, asked for by a check
        self.baseline = BaselineInfo(requested=plan.profile.baseline)
        self.gate_folder = f".site-{secrets.token_hex(6)}"  # the gate's files in a run's tree: no name head knows

    async def execute(self) -> None:
        plan = self.plan
        preflight = asyncio.create_task(self.backend.preflight(plan.profile.tools, plan.profile.stack.indexes))
        self.emit(RunStarted(
            run_id=plan.request.run_id, repo=str(plan.repo.path), base_ref=plan.request.base,
            head_ref=plan.request.head, base=plan.base.sha, head=plan.head.sha,
            backend=self.backend.name, stack=plan.profile.stack.name, checks=CHECK_ORDER,
            notes=self.backend.notes, isolation=isolation_of(self.backend),
        ))
        self.emit(DigestsComputed(plan.digests))
        first_kept, first_skips = self._diff_checks()
        self._hidden()
        await preflight  # a missing tool is raised to the consumer: nothing was judged
        workspace: Workspace | None = None
        if plan.profile.baseline:
            self.base_task = asyncio.create_task(self._base_run())
        try:
            workspace = await self._install()
            if workspace is not None:
                self.opened = None  # closed below as `workspace`; a failed install's stays `opened`
            if workspace is None:
                self._not_run((CheckId.RUNS, CheckId.OLD_TESTS, CheckId.HIDDEN), "not run: install failed")
                if first_kept is None:  # a failure from the diff was said already, once
                    self._finish(self._pass(CheckId.TESTS_KEPT, f"{DIFF_ONLY}: install failed"))
                if first_skips is None:
                    self._finish(self._pass(CheckId.NO_NEW_SKIPS, f"{DIFF_ONLY}: install failed"))
            else:
                await self._suite(workspace, first_kept, first_skips)
        except BackendError as err:
            self._error_open_checks(str(err))
        except OSError as err:  # a full disk, a vanished directory: the gate's problem
            self._error_open_checks(f"the gate could not go on: {err}")
        finally:
            await self._close(workspace)
        self.account = await account_of(self.backend)
        self._done()

    async def _close(self, workspace: Workspace | None) -> None:
        """Close what the run opened; base's own run is stopped meanwhile
        (its own finally closes base's workspace)."""
        running = [t for t in (self.base_task, self.asked_base) if t is not None and not t.done()]
        for task in running:
            task.cancel()
        try:  # opened: cancelled mid-install
            await close_all([w for w in (workspace, self.opened) if w is not None])
        finally:
            for task in running:
                with contextlib.suppress(asyncio.CancelledError, BackendError, OSError):
                    await task

    # --- checks ---------------------------------------------------------

    def _diff_checks(self) -> tuple[CheckResult | None, CheckResult | None]:
        scan = self.plan.scan
        kept, skips = judge.diff_tests_kept(scan), judge.diff_no_new_skips(scan)
        if skips is None and self.hooks.skips:
            skips = judge.skips_in_code(self.hooks.skips)
        for check, verdict, interim in (
            (CheckId.TESTS_KEPT, kept, f"diff: {len(scan.removed)} removed, {len(scan.added)} added"),
            (CheckId.NO_NEW_SKIPS, skips, "diff: no marker added"),
        ):
            self._start(check)
            if verdict is not None:
                self._finish(verdict)
            else:
                self.emit(CheckProgress(check, f"{interim}; waiting for the runs"))
        return kept, skips

    def _hidden(self) -> None:
        """Answered now unless there are hidden tests to run: not configured
        is skipped; configured with nothing to run is the gate's error (a
        gate that was meant to run hidden tests must not pass without)."""
        self._start(CheckId.HIDDEN)
        if self.plan.profile.hidden is None:
            self._finish(CheckResult(CheckId.HIDDEN, Status.SKIPPED, "not configured"))
        elif self.plan.hidden is None:
            self._finish(CheckResult(CheckId.HIDDEN, Status.ERROR, self.plan.hidden_problem))
        else:
            self.emit(CheckProgress(CheckId.HIDDEN, "waiting for the install"))

    def _export_head(self, dest: Path) -> None:
        self.plan.repo.export(self.plan.head.sha, dest)

    async def _install(self) -> Workspace | None:
        self._start(CheckId.INSTALL)
        refused = refusal(self.plan.base, self.plan.head, self.plan.profile.unreadable_code)
        if refused:
            self._finish(CheckResult(CheckId.INSTALL, Status.FAIL, refused))
            return None
        workspace = self.opened = await self.backend.open(self._export_head, self.plan.request.run_id)
        build = self.plan.profile.build_check
        wheel = asyncio.create_task(self._build(workspace, build)) if build is not None else None
        try:
            failed = await self._installer(CheckId.INSTALL, "install").install(workspace, verify=True)
            findings = await wheel if wheel is not None and failed is None else []
        finally:
            if wheel is not None and not wheel.done():  # the install failed: its wheel is not judged
                wheel.cancel()
                with contextlib.suppress(asyncio.CancelledError, BackendError, OSError):
                    await wheel
        if failed is None:
            failed = await self._hand_on(workspace)
        if failed is not None:
            self._finish(await self._install_failed(failed))
            return None
        if findings and build is not None:
            self._finish(CheckResult(CheckId.INSTALL, Status.REVIEW, build.describe(findings)))
        else:
            self._finish(self._pass(CheckId.INSTALL, "fresh copy, fresh environment"))
        return workspace

    async def _build(self, workspace: Workspace, build: BuildCheck) -> Sequence[object]:
        """Head's distributable, built beside the install in the same
        workspace (where head's build code runs anyway, before the first
        fork), then compared with the commit: what users install must be
        what the runs tested."""
        profile = self.plan.profile
        command = build.command.replace("{report}", shlex.quote(workspace.report_path(build.report)))
        result = await self._run(workspace, CheckId.INSTALL, "wheel", command, dict(profile.install_env))
        if not result.ok:
            return [f"{build.label} could not be built ({result.describe_end()}): {last_line(result.output_tail)}"]
        built = await workspace.read_report(build.report)
        if built is None:
            return [f"{build.label} was built but left no file to read"]
        return await asyncio.to_thread(build.findings, built, self.plan.head, profile.build_generated)

    def _installer(self, check: CheckId, stream: str) -> Installer:
        async def run(workspace: Workspace, command: str, env: dict[str, str], network: bool) -> CommandResult:
            return await self._run(workspace, check, stream, command, env, network=network)
        return Installer(self.plan.profile, run)

    async def _hand_on(self, workspace: Workspace) -> Failed | None:
        """The environment is checked where the runs will see it: in a copy
        no code of head's has run in yet (every fork hands on the same
        environment, and on Runtime the install's machine, where head's code
        ran, is trusted for nothing). Then head's packages are imported in
        that copy: importing runs head's code, which must not get to write
        the environment either."""
        check, modules = self.plan.profile.environment_check, self.plan.import_modules
        if check is None and not modules:
            return None
        (copy,) = await workspace.fork(1, self._export_head, self.plan.profile.environment)
        try:
            if check is not None:
                refused = await self._installer(CheckId.INSTALL, "install").check(copy, "all", verify=True)
                if isinstance(refused, Failed):
                    return refused
            importer = self.plan.profile.import_command
            if not modules or importer is None:
                return None
            command = importer.command.replace("{modules}", shlex.join(modules))
            result = await self._run(copy, CheckId.INSTALL, "install", command, dict(importer.env), network=False)
        finally:
            await close_all([copy])
        return None if result.ok else Failed(f"import {', '.join(modules)}", result, heads_own=True)

    async def _install_failed(self, failed: Failed) -> CheckResult:
        """An install that fails at head is the change's fault only if base
        installs: a project whose base fails the same way (a dependency gone
        from the index, a build that needs a tool this machine lacks) is an
        error for a person, not a mark against the agent. The import check
        is head's own code: never compared."""
        result = failed.result
        if result is not None and result.timed_out:
            return CheckResult(CheckId.INSTALL, Status.ERROR,
                               f"`{failed.step}` {result.describe_end()}: raise the time limit (--timeout)")
        said = failed.said if result is None else \
            f"`{failed.step}` failed ({result.describe_end()}): {last_line(result.output_tail)}"
        if failed.heads_own:
            return CheckResult(CheckId.INSTALL, Status.FAIL, said)
        self.emit(CheckProgress(CheckId.INSTALL, "failed at head; installing base the same way, to tell whose it is"))
        at_base = await self._base_install(verify=result is None)
        if at_base is None:
            return CheckResult(CheckId.INSTALL, Status.FAIL, f"{said}; base installs")
        if at_base == failed.step:
            return CheckResult(CheckId.INSTALL, Status.ERROR, f"{said}; base fails the same install, so it is "
                               "the project or this machine, not this change: make base install, then gate again")
        return CheckResult(CheckId.INSTALL, Status.FAIL, f"{said}; base's install could not tell ({at_base})")

    async def _base_install(self, verify: bool) -> str | None:
        """Base installed in a workspace of its own (its environment checked
        when head's check was what failed): None when it installs, else the
        step it failed on (or why it could not tell)."""
        async with self._base_workspace("base-install") as workspace:
            failed = await self._installer(CheckId.INSTALL, "base install").install(workspace, verify)
        if failed is None:
            return None
        if failed.result is not None and failed.result.timed_out:
            return f"base's `{failed.step}` {failed.result.describe_end()}"
        return failed.step

    @contextlib.asynccontextmanager
    async def _base_workspace(self, suffix: str) -> AsyncIterator[Workspace]:
        """Base's tree in a workspace of its own, closed however the caller ends."""
        plan = self.plan
        workspace = await self.backend.open(lambda dest: plan.repo.export(plan.base.sha, dest),
                                            f"{plan.request.run_id}-{suffix}")
        try:
            yield workspace
        finally:
            await close_all([workspace])

    async def _suite(self, workspace: Workspace, first_kept: CheckResult | None,
                     first_skips: CheckResult | None) -> None:
        hidden = self.plan.hidden
        # each run a fresh export of head: of the install, only the environment
        copies = await workspace.fork(RUNS + 1 + (hidden is not None), self._export_head,
                                      self.plan.profile.environment, network=self.plan.profile.test_network)
        try:
            await copies[RUNS].write_files(self.plan.old_tests_files)
            self._start(CheckId.RUNS)
            self._start(CheckId.OLD_TESTS)
            if self.plan.profile.random_order and self.plan.digests.random_seed is None:
                self.emit(CheckProgress(CheckId.RUNS, "random_order: "
                                        f"{self.plan.profile.runner} runs cannot be shuffled and keep their order"))
            jobs = [self._head_run(w, i) for i, w in enumerate(copies[:RUNS])]
            jobs.append(self._suite_run(copies[RUNS], CheckId.OLD_TESTS, "old tests", self._old_tests_env(),
                                        ran=RunTree(self.plan.head, self.plan.old_tests_files)))
            if hidden is not None:
                jobs.append(self._hidden_run(copies[RUNS + 1]))
            done = await asyncio.gather(*jobs)
        finally:
            await close_all(copies)
        runs, old = list(done[:RUNS]), done[RUNS]
        if hidden is not None:
            self._finish(judge_hidden(done[RUNS + 1], hidden))
        if start.refused([*runs, old], self.plan.profile.cannot_start):
            refused_at_base = await self._refused_at_base()
            if refused_at_base:
                self._finish(CheckResult(CheckId.RUNS, Status.ERROR, refused_at_base))
                self._error_open_checks("not judged: the suite cannot start, at base either (see runs)")
                return
        runs, old = await self._judge_runs(runs, old)
        self.outside = judge.passed_outside_tests(old, runs, self._test_file_unchanged)
        digests = self.plan.digests
        verdict = judge.judge_old_tests(old, digests.sealed_changed, digests.judge_changed,
                                        self.plan.forbidden)
        self._finish(judge.defend_old_tests(verdict, self.hooks.findings + self.hooks.reaches, self.outside))
        kept, skips = judge.second_halves(first_kept, first_skips, old, runs, self.plan.still_defined)
        if skips.status is Status.PASS and judge.skipped_anywhere([old]):  # head-only skips are caught above
            skips = await self._skips_against_base(skips, [*runs, old])
        for result in (kept, skips):
            if result.id not in self.results:
                self._finish(result)

    async def _head_run(self, workspace: Workspace, index: int) -> judge.SuiteRun:
        """Run `index + 1`; the random-order one gets the plugin and its seed."""
        seed = self.plan.digests.random_seed
        if index == 0:
            return await self._first_run(workspace)
        if seed is None or index != random_order.RUN_INDEX:
            return await self._suite_run(workspace, CheckId.RUNS, f"run {index + 1}", {})
        shuffle = self.plan.profile.shuffle
        assert shuffle is not None  # the plan draws a seed only for a runner that shuffles
        run = await self._suite_run(workspace, CheckId.RUNS, f"run {index + 1}",
                                    await self._plugin(workspace, shuffle, seed=seed))
        return replace(run, seed=seed)

    async def _first_run(self, workspace: Workspace) -> judge.SuiteRun:
        """Run 1, then in its copy the reruns of the tests head added or
        changed (see gate/rerun.py)."""
        run = await self._suite_run(workspace, CheckId.RUNS, "run 1", {})
        profile = self.plan.profile
        ids = rerun.targets(run.report, self._changed_at_head) \
            if run.report is not None and profile.rerun is not None else []
        if not ids or profile.rerun is None:
            return run
        again = await self._suite_run(workspace, CheckId.RUNS, "reruns",
                                      await self._plugin(workspace, profile.rerun, reruns=rerun.RERUNS),
                                      rerun.command(profile.test, ids))
        return replace(run, reruns=again)

    async def _plugin(self, workspace: Workspace, plugin: RunPlugin, **values: object) -> dict[str, str]:
        """Write a runner plugin's files into the run's gate folder; the
        environment that loads it."""
        folder = f"{workspace.path.rstrip('/')}/{self.gate_folder}"
        await workspace.write_files({f"{self.gate_folder}/{rel}": data for rel, data in plugin.files.items()})
        return plugin.env_for(folder, **values)

    def _changed_at_head(self, path: str) -> bool:
        return not self._test_file_unchanged(path)

    async def _hidden_run(self, workspace: Workspace) -> judge.SuiteRun:
        """The hidden tests over base's sealed files (head's conftest.py and
        pytest settings cannot drop them), their output on its own stream."""
        assert self.plan.hidden is not None
        self.started[CheckId.HIDDEN] = time.monotonic()  # announced at the start, timed from here
        over = {**self.plan.old_tests_files, **self.plan.hidden.files}
        await workspace.write_files(over)
        command = hidden_command(self.plan.profile.test, self.plan.hidden)
        return await self._suite_run(workspace, CheckId.HIDDEN, HIDDEN_STREAM, self._old_tests_env(), command,
                                     RunTree(self.plan.head, over))

    async def _judge_runs(self, runs: list[judge.SuiteRun],
                          old: judge.SuiteRun) -> tuple[list[judge.SuiteRun], judge.SuiteRun]:
        """Strict, or against base's own failures when the baseline is there;
        returns the runs as judged (told what base already failed)."""
        base_run = await self.base_task if self.base_task is not None else None
        if base_run is None or not base_run.usable:
            if base_run is not None:
                self.baseline = replace(self.baseline, base=base_run.base, problem=base_run.problem)
                self.emit(CheckProgress(CheckId.RUNS, f"baseline not used, judged strictly: {base_run.problem}"))
            self._finish(judge.with_reruns(judge.judge_runs(runs), runs))
            return runs, old
        self.baseline = replace(self.baseline, used=True, base=base_run.base, cached=base_run.cached,
                                known_failures=tuple(sorted(base_run.failing)))
        self._finish(judge.with_reruns(baseline.judge_runs_against(runs, base_run), runs, base_run.failing))
        return baseline.tolerate(runs, base_run), replace(old, tolerated=base_run.failing)

    async def _skips_against_base(self, skips: CheckResult, runs: list[judge.SuiteRun]) -> CheckResult:
        """Base's tests on head's code run head's library: a skip it raises at
        run time skips them too, so no run at head can contradict it. Base's
        own suite on base's own code can: asked for only when base's tests
        skip something on head's code, and cached per base commit like the
        baseline (a supervisor pays once per base)."""
        self.emit(CheckProgress(CheckId.NO_NEW_SKIPS, "tests were skipped at head; asking base's own suite "
                                                      "whether they passed there"))
        found = await self._base_own()
        if not found.usable:
            self.emit(CheckProgress(CheckId.NO_NEW_SKIPS, f"base's own suite not known: {found.problem}"))
            return skips
        return judge.skips_against_base(runs, found.outcomes) or skips

    def _base_own(self) -> asyncio.Task[baseline.BaseRun]:
        """Base's own suite on base's own code, run at most once a gate: the
        baseline's task when one was asked for, else one made on first need
        (the skips check and the refused-runner check may both ask)."""
        if self.base_task is not None:
            return self.base_task
        if self.asked_base is None:
            self.asked_base = asyncio.create_task(self._base_run())
        return self.asked_base

    async def _refused_at_base(self) -> str:
        """Every run at head ended before the runner started: does base's own
        suite, on base's own install, start? The answer for a person when it
        does not; "" when it does (then the change is what broke it)."""
        self.emit(CheckProgress(CheckId.RUNS, "the runner would not start; trying base's own suite, to tell whose "
                                              "it is"))
        found = await self._base_own()  # never kept as a baseline not asked for
        if not found.refused:
            return ""
        profile = self.plan.profile
        return start.explain(found.refused, profile.plugin_options, profile.start_fix)

    async def _base_run(self) -> baseline.BaseRun:
        """Base's suite on base's code, from the cache or a workspace of its
        own installed the same way; a usable result is cached."""
        plan, cache = self.plan, self.plan.request.baseline_cache
        cached = baseline.BaseRun.from_json(_cache_get(cache, plan.baseline_key), plan.base.sha)
        if cached is not None:
            return cached
        found = await self._measure_base()
        if found.usable and cache is not None:
            # a cache that cannot be written is a miss next time, not the gate's failure
            with contextlib.suppress(OSError, ValueError, GateError):
                cache.put(plan.baseline_key, found.to_json())
        return found

    async def _measure_base(self) -> baseline.BaseRun:
        base = self.plan.base.sha
        async with self._base_workspace("base") as workspace:
            failed = await self._installer(CheckId.RUNS, "baseline install").install(workspace, verify=False)
            if failed is not None:
                end = failed.said if failed.result is None else failed.result.describe_end()
                return baseline.BaseRun(base, {}, f"base's install `{failed.step}` {end}")
            run = await self._suite_run(workspace, CheckId.RUNS, "baseline", {}, ran=RunTree(self.plan.base))
            return baseline.BaseRun.of(base, run, self.plan.profile.cannot_start)

    def _test_file_unchanged(self, path: str) -> bool:
        base, head = self.plan.base, self.plan.head
        return path in base and path in head and base.ident(path) == head.ident(path)

    def _old_tests_env(self) -> dict[str, str]:
        """Base's tests run with base's runner settings and without any
        runner plugin head's package added (the stack's hook scan says how)."""
        env = dict(self.plan.old_tests_env)
        for key, value in self.hooks.old_tests_env.items():
            env[key] = f"{env.get(key, '')} {value}".strip()
        return env

    async def _suite_run(self, workspace: Workspace, check: CheckId, name: str, extra_env: dict[str, str],
                         test: str | None = None, ran: RunTree | None = None) -> judge.SuiteRun:
        """One run of the suite in `workspace`, whose tree is `ran` (head's by default)."""
        report_name = f"{name.replace(' ', '-')}.xml"
        path = shlex.quote(workspace.report_path(report_name))
        profile = self.plan.profile
        if profile.test_files:
            await workspace.write_files({f"{self.gate_folder}/{rel}": data for rel, data in profile.test_files.items()})
        places = {"{report}": path, "{gate}": f"{workspace.path.rstrip('/')}/{self.gate_folder}",
                  "{scratch}": workspace.scratch_path("cache"), "{tree}": workspace.path.rstrip("/")}
        env = {k: _fill(v, places) for k, v in profile.test_env.items()}
        for key, value in extra_env.items():
            joint = os.pathsep if key == "PYTHONPATH" else " "
            env[key] = f"{env[key]}{joint}{value}" if key in env else value
        command = (test or self.plan.profile.test).replace("{report}", path)
        result = await self._run(workspace, check, name, command, env,
                                 network=self.plan.profile.test_network)
        raw = await workspace.read_report(report_name)
        if raw is None and start.refused([judge.SuiteRun(name, result, None)], profile.cannot_start):
            return judge.SuiteRun(name, result, None, f"the runner would not start: "
                                                      f"{start.runners_words(result.output_tail)}")
        if raw is None:
            return judge.SuiteRun(name, result, None, "no report written")
        try:
            report = self._read_report(raw, workspace.path, ran or RunTree(self.plan.head))
        except ReportError as err:
            return judge.SuiteRun(name, result, None, str(err))
        return judge.SuiteRun(name, result, report)

    def _read_report(self, raw: bytes, root: str, ran: RunTree) -> Report:
        """The run's report, read the way the profile's runner writes it."""
        reader = self.plan.profile.read_report
        return parse_junit(raw, root=root, ids=self.plan.profile.report_ids) if reader is None \
            else reader(raw, root, ran)

    async def _run(self, workspace: Workspace, check: CheckId, stream: str, command: str,
                   env: dict[str, str], network: bool = True) -> CommandResult:
        """Installs reach the package index; test runs get no network (where
        the backend can take it away), so a test that calls out fails here."""
        self.emit(OutputChunk(check, stream, f"$ {command}\n"))
        result = await workspace.run(
            command, timeout=self.plan.timeout, env=env, network=network,
            on_output=lambda text: self.emit(OutputChunk(check, stream, text)),
        )
        if result.timed_out:
            result = replace(result, limit_seconds=self.plan.timeout)
        used = usage_of(result.wall_seconds, result.cpu_seconds, result.peak_rss_bytes)
        self.usage[check.value] = self.usage.get(check.value, Usage()) + used
        self.emit(CostUpdated(self._cost()))
        return result

    # --- bookkeeping ----------------------------------------------------

    def _start(self, check: CheckId) -> None:
        self.started[check] = time.monotonic()
        self.emit(CheckStarted(check))

    def _finish(self, result: CheckResult) -> None:
        seconds = time.monotonic() - self.started.get(result.id, self.clock)
        result = CheckResult(result.id, result.status, result.detail, round(seconds, 3))
        self.results[result.id] = result
        self.emit(CheckFinished(result))

    def _pass(self, check: CheckId, detail: str = "") -> CheckResult:
        return CheckResult(check, Status.PASS, detail)

    def _not_run(self, checks: tuple[CheckId, ...], why: str) -> None:
        for check in (c for c in checks if c not in self.results):
            self._start(check)
            self._finish(CheckResult(check, Status.SKIPPED, why))

    def _error_open_checks(self, message: str) -> None:
        for check in CHECK_ORDER:
            if check not in self.results:
                self.started.setdefault(check, self.clock)
                self._finish(CheckResult(check, Status.ERROR, message))

    def _cost(self) -> Cost:
        return Cost(per_check=dict(self.usage), measured=self.backend.measured,
                    account=self.account)

    def _done(self) -> None:
        results = tuple(self.results[c] for c in CHECK_ORDER if c in self.results)
        fatal = (self.plan.profile.on_old_tests_fail == "fail" or bool(self.plan.forbidden)
                 or bool(self.hooks.findings) or bool(self.outside))
        self.emit(RunFinished(
            verdict=decide(list(results), fatal), results=results, digests=self.plan.digests,
            cost=self._cost(), seconds=round(time.monotonic() - self.clock, 3),
            notes=self.backend.notes, baseline=self.baseline,
        ))


async def account_of(backend: Backend) -> dict[str, float]:
    """What the backend's account says of its credit after the run (Runtime:
    available and spent dollars); never a reason for the gate to fail."""
    try:
        credit = await asyncio.wait_for(backend.account(), 15)
    except Exception:  # noqa: BLE001 - a figure for the credit table, nothing more
        return {}
    return {} if credit is None else dict(credit)


def isolation_of(backend: Backend) -> dict[str, object]:
    """What the backend enforces, for the JSON ({} from one with nothing of
    this machine's to report)."""
    isolation = backend.isolation
    return {} if isolation is None else dict(isolation.to_json())


def _cache_get(cache: baseline.BaselineCache | None, key: str) -> Mapping[str, Any] | None:
    """A cache that cannot be read is a miss: base's suite runs again."""
    if cache is None:
        return None
    try:
        return cache.get(key)
    except (OSError, ValueError, GateError):
        return None


def _fill(value: str, places: Mapping[str, str]) -> str:
    for mark, place in places.items():
        value = value.replace(mark, place)
    return value


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


__all__ = ["run_gate"]
