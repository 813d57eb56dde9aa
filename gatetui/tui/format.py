"""Words and numbers as the screen shows them (no Textual: plain strings)."""

from __future__ import annotations

from gatetui.gate.checks import Status

STATUS_WORD = {
    Status.WAITING: "waiting",
    Status.RUNNING: "running",
    Status.PASS: "pass",
    Status.FAIL: "FAIL",
    Status.REVIEW: "REVIEW",
    Status.ERROR: "ERROR",
    Status.SKIPPED: "skip",
}
VERDICT_WORD = {
    "pass": "pass",
    "fail": "FAIL",
    "review": "REVIEW",
    "error": "ERROR",
    "running": "running",
    "queued": "queued",
    "cancelled": "cancelled",
    "stale": "stale",
    "at base": "at base",
    "no run": "no run",
    "accepted": "accepted",
    "rejected": "REJECTED",
}  # a review a person decided


def short(sha: str) -> str:
    return sha[:7] if sha else "-"


def ago(then: float | None, now: float) -> str:
    """ "12s ago", "5m ago", "3h ago", "2d ago"."""
    if not then:
        return "-"
    seconds = max(0, int(now - then))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}s"


def dollars(value: float) -> str:
    return f"${value:.6f}"


def one_line(text: str, width: int = 200) -> str:
    line = text.split("\n", 1)[0]  # the gate's own line break: head's others are shown escaped
    return line if len(line) <= width else line[: width - 1] + "…"
