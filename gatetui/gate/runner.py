"""The gate runner: one async stream of typed events per gate run.

Diff checks answer first, before any sandbox exists. Then a fresh workspace
installs head; its copies run the suite three times and base's tests once,
side by side. Every command's output streams out as it arrives, and every
workspace is closed however the run ends (pass, fail, error, a consumer that
stops listening).
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import time
from collections.abc import AsyncIterator, Callable

from gatetui.backends.base import Backend, CommandResult, Workspace
from gatetui.errors import BackendError
from gatetui.gate import judge
from gatetui.gate.checks import CHECK_ORDER, CheckId, CheckResult, Status, decide
from gatetui.gate.cost import Cost, Usage, usage_of
from gatetui.gate.events import (
    CheckFinished, CheckProgress, CheckStarted, CostUpdated, DigestsComputed, GateEvent,
    OutputChunk, RunFinished, RunStarted,
)
from gatetui.gate.hooks import scan_hooks
from gatetui.gate.junit import ReportError, parse_junit
from gatetui.gate.plan import Plan

RUNS = 3
Emit = Callable[[GateEvent], None]


async def run_gate(plan: Plan, backend: Backend) -> AsyncIterator[GateEvent]:
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
        self.hooks = scan_hooks(plan.base, plan.head, plan.profile.is_test_file)
        self.outside: list[str] = []  # base tests passed by a change outside the tests
        self.opened: Workspace | None = None  # the install's workspace until _install returns

    async def execute(self) -> None:
        plan = self.plan
        preflight = asyncio.create_task(self.backend.preflight(plan.profile.tools))
        self.emit(RunStarted(
            run_id=plan.request.run_id, repo=str(plan.repo.path), base_ref=plan.request.base,
            head_ref=plan.request.head, base=plan.base.sha, head=plan.head.sha,
            backend=self.backend.name, stack=plan.profile.stack, checks=CHECK_ORDER,
            notes=self.backend.notes, isolation=isolation_of(self.backend),
        ))
        self.emit(DigestsComputed(plan.digests))
        first_kept, first_skips = self._diff_checks()
        self._hidden()
        await preflight  # a missing tool is raised to the consumer: nothing was judged
        workspace: Workspace | None = None
        try:
            workspace = await self._install()
            if workspace is not None:
                self.opened = None  # closed below as `workspace`; a failed install's stays `opened`
            if workspace is None:
                self._not_run((CheckId.RUNS, CheckId.OLD_TESTS), "not run: install failed")
                self._finish(first_kept or self._pass(CheckId.TESTS_KEPT, "diff only: install failed"))
                self._finish(first_skips or self._pass(CheckId.NO_NEW_SKIPS, "diff only: install failed"))
            else:
                await self._suite(workspace, first_kept, first_skips)
        except BackendError as err:
            self._error_open_checks(str(err))
        except OSError as err:  # a full disk, a vanished directory: the gate's problem
            self._error_open_checks(f"the gate could not go on: {err}")
        finally:
            for open_one in (workspace, self.opened):  # opened: cancelled mid-install
                if open_one is not None:
                    await asyncio.shield(open_one.close())
        self._done()

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
        self._start(CheckId.HIDDEN)
        self._finish(CheckResult(CheckId.HIDDEN, Status.SKIPPED, "not configured"))

    async def _install(self) -> Workspace | None:
        self._start(CheckId.INSTALL)
        workspace = self.opened = await self.backend.open(
            lambda dest: self.plan.repo.export(self.plan.head.sha, dest), self.plan.request.run_id
        )
        for command in self._install_commands():
            result = await self._run(workspace, CheckId.INSTALL, "install", command,
                                     dict(self.plan.profile.install_env))
            if result.timed_out:
                self._finish(CheckResult(CheckId.INSTALL, Status.ERROR,
                                         f"`{command}` {result.describe_end()}: raise the time limit (--timeout)"))
                return None
            if not result.ok:
                self._finish(CheckResult(CheckId.INSTALL, Status.FAIL,
                                         f"`{command}` failed ({result.describe_end()}): {last_line(result.output_tail)}"))
                return None
        self._finish(self._pass(CheckId.INSTALL, "fresh copy, fresh environment"))
        return workspace

    def _install_commands(self) -> list[str]:
        commands = list(self.plan.profile.install)
        if self.plan.import_modules:
            imports = ", ".join(self.plan.import_modules)
            commands.append(f".venv/bin/python -I -c {shlex.quote(f'import {imports}')}")
        return commands

    async def _suite(self, workspace: Workspace, first_kept: CheckResult | None,
                     first_skips: CheckResult | None) -> None:
        copies = await workspace.fork(RUNS + 1)  # the installed original stays untouched
        try:
            await copies[-1].write_files(self.plan.old_tests_files)
            self._start(CheckId.RUNS)
            self._start(CheckId.OLD_TESTS)
            runs_and_old = await asyncio.gather(
                *(self._suite_run(w, CheckId.RUNS, f"run {i + 1}", {}) for i, w in
                  enumerate(copies[:-1])),
                self._suite_run(copies[-1], CheckId.OLD_TESTS, "old tests", self._old_tests_env()),
            )
        finally:
            for copy in copies:
                await asyncio.shield(copy.close())
        runs, old = list(runs_and_old[:-1]), runs_and_old[-1]
        self._finish(judge.judge_runs(runs))
        self.outside = judge.passed_outside_tests(old, runs, self._test_file_unchanged)
        digests = self.plan.digests
        verdict = judge.judge_old_tests(old, digests.sealed_changed, digests.judge_changed,
                                        self.plan.forbidden)
        self._finish(judge.defend_old_tests(verdict, self.hooks.findings, self.outside))
        kept, skips = judge.second_halves(first_kept, first_skips, old, runs, self.plan.still_defined)
        for result in (kept, skips):
            if result.id not in self.results:
                self._finish(result)

    def _test_file_unchanged(self, path: str) -> bool:
        base, head = self.plan.base, self.plan.head
        return path in base and path in head and base.ident(path) == head.ident(path)

    def _old_tests_env(self) -> dict[str, str]:
        """Base's tests run without any pytest plugin head's package added."""
        env = dict(self.plan.old_tests_env)
        if self.hooks.plugins and self.plan.profile.runner == "pytest":
            blocked = " ".join(f"-p no:{name}" for name in self.hooks.plugins)
            env["PYTEST_ADDOPTS"] = f"{env.get('PYTEST_ADDOPTS', '')} {blocked}".strip()
        return env

    async def _suite_run(self, workspace: Workspace, check: CheckId, name: str,
                         extra_env: dict[str, str]) -> judge.SuiteRun:
        report_name = f"{name.replace(' ', '-')}.xml"
        path = shlex.quote(workspace.report_path(report_name))
        env = {k: v.replace("{report}", path) for k, v in self.plan.profile.test_env.items()}
        for key, value in extra_env.items():
            env[key] = f"{env[key]} {value}" if key in env else value
        command = self.plan.profile.test.replace("{report}", path)
        result = await self._run(workspace, check, name, command, env, network=False)
        raw = await workspace.read_report(report_name)
        if raw is None:
            return judge.SuiteRun(name, result, None, "no report written")
        try:
            report = parse_junit(raw, root=workspace.path)
        except ReportError as err:
            return judge.SuiteRun(name, result, None, str(err))
        return judge.SuiteRun(name, result, report)

    async def _run(self, workspace: Workspace, check: CheckId, stream: str, command: str,
                   env: dict[str, str], network: bool = True) -> CommandResult:
        """Installs reach the package index; test runs get no network (where
        the backend can take it away), so a test that calls out fails here."""
        self.emit(OutputChunk(check, stream, f"$ {command}\n"))
        result = await workspace.run(
            command, timeout=self.plan.timeout, env=env, network=network,
            on_output=lambda text: self.emit(OutputChunk(check, stream, text)),
        )
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
        for check in checks:
            self._start(check)
            self._finish(CheckResult(check, Status.SKIPPED, why))

    def _error_open_checks(self, message: str) -> None:
        for check in CHECK_ORDER:
            if check not in self.results:
                self.started.setdefault(check, self.clock)
                self._finish(CheckResult(check, Status.ERROR, message))

    def _cost(self) -> Cost:
        return Cost(per_check=dict(self.usage), measured=bool(getattr(self.backend, "measured", False)))

    def _done(self) -> None:
        results = tuple(self.results[c] for c in CHECK_ORDER if c in self.results)
        fatal = (self.plan.profile.on_old_tests_fail == "fail" or bool(self.plan.forbidden)
                 or bool(self.hooks.findings) or bool(self.outside))
        self.emit(RunFinished(
            verdict=decide(list(results), fatal), results=results, digests=self.plan.digests,
            cost=self._cost(), seconds=round(time.monotonic() - self.clock, 3),
            notes=self.backend.notes,
        ))


def isolation_of(backend: Backend) -> dict[str, object]:
    """What the backend enforces, for the JSON; a backend that runs on
    machines the agent never touched (runtime) says so itself."""
    isolation = getattr(backend, "isolation", None)
    to_json = getattr(isolation, "to_json", None)
    return dict(to_json()) if callable(to_json) else {}


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


__all__ = ["run_gate"]
