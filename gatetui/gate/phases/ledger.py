"""The run's bookkeeping: when each check started and how it ended, what
its commands used, and the events that say so as they happen.

Every check event of a gate run leaves through a Ledger, so a check is
announced and answered in one place, timed from its announcement.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import replace

from gatetui.backends.base import CommandResult, Workspace
from gatetui.gate.checks import CHECK_ORDER, SPECS, CheckId, CheckResult, CheckSpec, Status
from gatetui.gate.cost import Cost, Usage, used_by
from gatetui.gate.events import CheckFinished, CheckProgress, CheckStarted, CostUpdated, GateEvent, OutputChunk

Emit = Callable[[GateEvent], None]


class Ledger:
    def __init__(self, emit: Emit, timeout: float, measured: bool):
        self.emit, self.timeout, self.measured = emit, timeout, measured
        self.results: dict[CheckId, CheckResult] = {}
        self.usage: dict[str, Usage] = {}
        self.started: dict[CheckId, float] = {}
        self.clock = time.monotonic()
        self.account: dict[str, float] = {}  # the backend account's credit, where it has one
        self.saved: dict[str, Usage] = {}  # what a kept dependency layer spared each check

    def start(self, check: CheckId) -> None:
        self.started[check] = time.monotonic()
        self.emit(CheckStarted(check))

    def time_from_now(self, check: CheckId) -> None:
        """A check announced early, whose work begins only now, is timed from here."""
        self.started[check] = time.monotonic()

    def progress(self, check: CheckId, detail: str) -> None:
        self.emit(CheckProgress(check, detail))

    def finish(self, result: CheckResult) -> None:
        seconds = time.monotonic() - self.started.get(result.id, self.clock)
        result = CheckResult(result.id, result.status, result.detail, round(seconds, 3))
        self.results[result.id] = result
        self.emit(CheckFinished(result))

    def finish_open(self, results: Iterable[CheckResult]) -> None:
        """Finish those of `results` whose check has no answer yet."""
        for result in results:
            if result.id not in self.results:
                self.finish(result)

    def open(self) -> tuple[CheckSpec, ...]:
        """The checks without an answer yet, in the gate's order."""
        return tuple(spec for spec in SPECS if spec.id not in self.results)

    def not_run(self, checks: Iterable[CheckId], why: str) -> None:
        """Skipped, each announced first unless it was (with the plan)."""
        for check in (c for c in checks if c not in self.results):
            if check not in self.started:
                self.start(check)
            self.finish(CheckResult(check, Status.SKIPPED, why))

    def error_open(self, message: str) -> None:
        """Every check without an answer ends in the gate's error."""
        for spec in self.open():
            self.started.setdefault(spec.id, self.clock)
            self.finish(CheckResult(spec.id, Status.ERROR, message))

    def in_order(self) -> tuple[CheckResult, ...]:
        return tuple(self.results[c] for c in CHECK_ORDER if c in self.results)

    async def run(
        self,
        workspace: Workspace,
        check: CheckId,
        stream: str,
        command: str,
        env: dict[str, str],
        network: bool = True,
        timeout: float | None = None,
    ) -> CommandResult:
        """Installs reach the package index; test runs get no network (where
        the backend can take it away), so a test that calls out fails here.
        The output streams out as it comes; what the command used is
        charged to `check`. `timeout`: a limit of its own, below the run's."""
        self.emit(OutputChunk(check, stream, f"$ {command}\n"))
        limit = self.timeout if timeout is None else min(timeout, self.timeout)
        result = await workspace.run(
            command,
            timeout=limit,
            env=env,
            network=network,
            on_output=lambda text: self.emit(OutputChunk(check, stream, text)),
        )
        if result.timed_out:
            result = replace(result, limit_seconds=limit)
        used = used_by(result)
        self.usage[check.value] = self.usage.get(check.value, Usage()) + used
        self.emit(CostUpdated(self.cost()))
        return result

    def save(self, check: CheckId, usage: Usage) -> None:
        """Work `check` did not do (a dependency layer found, not built), as
        it cost when it was done."""
        self.saved[check.value] = self.saved.get(check.value, Usage()) + usage
        self.emit(CostUpdated(self.cost()))

    def cost(self) -> Cost:
        return Cost(per_check=dict(self.usage), measured=self.measured, account=self.account, saved=dict(self.saved))
