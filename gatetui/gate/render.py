"""Plain-text and JSON sinks for the gate's event stream (no Textual).

`gatetui check` shows live progress on stderr and the verdict block (one
line per check, then the verdict) (or one JSON object) on stdout, so a script can parse stdout while a
person watches stderr.
"""

from __future__ import annotations

import json
import time
from typing import TextIO

from gatetui.gate.events import (
    CheckFinished,
    CheckProgress,
    CheckStarted,
    GateEvent,
    OutputChunk,
    RunFinished,
    RunStarted,
)
from gatetui.inert import inert, inert_line


class Progress:
    """One line per step on a text stream, with the elapsed time."""

    def __init__(self, out: TextIO, verbose: bool = False):
        self.out = out
        self.verbose = verbose
        self.t0 = time.monotonic()
        self.partial: dict[str, str] = {}  # per stream: output read since its last newline

    def __call__(self, event: GateEvent) -> None:
        if isinstance(event, OutputChunk):
            if self.verbose:
                self._output(event.stream, event.text)
            return
        if isinstance(event, RunFinished):
            self.flush()
        line = self.line(event)
        if line:
            print(f"[{time.monotonic() - self.t0:6.1f}s] {line}", file=self.out, flush=True)

    def _output(self, stream: str, text: str) -> None:
        """Whole lines only: pytest's progress line (one dot per test) comes
        in many reads, and each read on a line of its own was unreadable."""
        *lines, rest = (self.partial.pop(stream, "") + text).split("\n")
        if rest:
            self.partial[stream] = rest
        for line in lines:
            print(f"  {stream} | {inert(line)}", file=self.out, flush=True)  # one line: split at newlines

    def flush(self) -> None:
        """What is left of each stream without its newline."""
        for stream, rest in self.partial.items():
            print(f"  {stream} | {inert(rest)}", file=self.out, flush=True)
        self.partial.clear()

    @staticmethod
    def line(event: GateEvent) -> str:
        match event:
            case RunStarted():
                notes = "".join(f"\n           note: {inert_line(n)}" for n in event.notes)
                return (
                    f"gating {inert_line(event.head_ref)} ({event.head[:7]}) against "
                    f"{inert_line(event.base_ref)} "
                    f"({event.base[:7]}): {event.stack}, {event.backend} backend{notes}"
                )
            case CheckStarted():
                return f"{event.check.value}: started"
            case CheckProgress():
                return f"{event.check.value}: {inert_line(event.detail)}"
            case CheckFinished():
                r = event.result
                first = r.detail.split("\n", 1)[0]
                detail = f" ({inert_line(first)})" if first else ""
                return f"{r.id.value}: {r.status.value} in {r.seconds:.1f} s{detail}"
            case RunFinished():
                return f"verdict: {event.verdict.value} in {event.seconds:.1f} s"
        return ""


def verdict_block(finished: RunFinished, detailed: bool = False) -> str:
    """One line per check and the verdict, ready to print: each one inert. `detailed`:
    under each check, the rest of its detail (each uncovered line, each
    surviving mutant and the input that tells it apart), indented."""
    lines: list[str] = []
    for r in finished.results:
        lines.append(inert_line(r.line()))
        lines += [f"    {inert_line(more)}" for more in r.detail.splitlines()[1:]] if detailed else []
    lines.append(f"verdict: {finished.verdict.value}")
    return "\n".join(lines)


def verdict_json(started: RunStarted, finished: RunFinished) -> str:
    return json.dumps(verdict_record(started, finished), indent=2)


def verdict_record(started: RunStarted, finished: RunFinished) -> dict[str, object]:
    """The run as one JSON-ready object: `check --json`, history and seals
    all use this shape, so a stored verdict reads like the CLI's."""
    return {
        "run_id": started.run_id,
        "repo": started.repo,
        "verdict": finished.verdict.value,
        "base": finished.digests.base,
        "head": finished.digests.head,
        "base_ref": started.base_ref,
        "head_ref": started.head_ref,
        "stack": started.stack,
        "backend": started.backend,
        "checks": [
            {
                "id": r.id.value,
                "title": r.title,
                "ok": r.ok,
                "status": r.status.value,
                "detail": r.detail,
                "seconds": r.seconds,
            }
            for r in finished.results
        ],
        "digests": finished.digests.to_json(),
        "cost": finished.cost.to_json(),
        "notes": list(finished.notes),
        "isolation": started.isolation,
        "baseline": finished.baseline.to_json(),
        "seconds": finished.seconds,
    }
