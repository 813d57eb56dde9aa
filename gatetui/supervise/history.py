"""Keeps every gate run in the state directory: a consumer of the event stream.

The TUI and `gatetui serve` both feed their runs through a Recorder, so the
history a restarted app shows and the records `gatetui verify` checks are
written one way, with each command stream's output beside the record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gatetui.gate.events import GateEvent, OutputChunk, RunFinished, RunStarted
from gatetui.gate.render import verdict_record
from gatetui.supervise.store import CappedLog, Store


class Recorder:
    """Feed it every event of one run; on RunFinished the sealed record is kept."""

    def __init__(self, store: Store, branch: str = ""):
        self.store = store
        self.branch = branch
        self.started: RunStarted | None = None
        self.logs: dict[str, CappedLog] = {}
        self.record: dict[str, Any] | None = None
        self.path: Path | None = None

    def __call__(self, event: GateEvent) -> None:
        if isinstance(event, RunStarted):
            self.started = event
        elif isinstance(event, OutputChunk) and self.started is not None:
            log = self.logs.get(event.stream)
            if log is None:
                log = self.logs[event.stream] = self.store.open_log(
                    self.started.repo, self.started.run_id, event.stream
                )
            log.write(event.text)
        elif isinstance(event, RunFinished) and self.started is not None:
            self.close_logs()
            record = verdict_record(self.started, event)
            record["branch"] = self.branch or self.started.head_ref
            self.path = self.store.save_run(self.started.repo, record)
            self.record = self.store.read_json(self.path.relative_to(self.store.root))

    def close_logs(self) -> None:
        for log in self.logs.values():
            log.close()
        self.logs.clear()
