"""The supervisor's state directory: history, logs, the verdict key, submits.

Log hiding rests on this directory being the supervisor's alone: it is 0700,
owned by the supervisor, and the code under test runs as another uid, so it
can neither read nor write anything here. Every write is atomic (write,
fsync, rename) so a crash never leaves a half-written record, and every
verdict record carries an HMAC with a key only the supervisor can read, so
`gatetui verify` can tell a stored verdict that was altered.

Layout, per supervised repository (keyed by a digest of its real path):
    key                       the verdict key (32 random bytes, 0600)
    repos/KEY/repo.json       {"path": ...}
    repos/KEY/runs/ID.json    one verdict record each, sealed
    repos/KEY/logs/ID/NAME.log each command stream's output (capped)
    repos/KEY/submits.json    submits used per branch
    repos/KEY/hidden/         hidden tests (never in the repo)
    active/ID.json            runs under way: what to clean up after a crash
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from gatetui.supervise.state_dir import (
    StateDir,
    StoreError,
    Verification,
    default_state_dir,
    repo_key,
    safe_name,
    seal_of,
)

__all__ = ["CappedLog", "Store", "StoreError", "Verification", "default_state_dir", "repo_key", "seal_of"]

LOG_CAP = 4 << 20  # bytes of output kept per stream in the history


class Store(StateDir):
    """What the supervisor keeps: verdict records, logs, submits, runs under way."""

    # --- history -------------------------------------------------------------

    def save_run(self, repo: str | Path, record: dict[str, Any]) -> Path:
        """Seal and keep a finished run's record; returns where it is."""
        run_id = safe_name(str(record["run_id"]))
        record = {**record, "finished_at": record.get("finished_at") or round(time.time(), 3)}
        rel = self.repo_dir(repo).relative_to(self.root) / "runs" / f"{run_id}.json"
        sealed = self.seal(record)
        return self.write_atomic(rel, json.dumps(sealed, indent=2, sort_keys=True).encode())

    def runs(self, repo: str | Path) -> list[dict[str, Any]]:
        """Every kept run of a repo, oldest first; unreadable records skipped."""
        folder = self.repo_dir(repo) / "runs"
        records = []
        for path in folder.glob("*.json") if folder.is_dir() else ():
            with contextlib.suppress(OSError, ValueError):
                records.append(json.loads(path.read_text()))
        return sorted(records, key=lambda r: (r.get("finished_at", 0), r.get("run_id", "")))

    def run_path(self, repo: str | Path, run_id: str) -> Path:
        return self.repo_dir(repo) / "runs" / f"{safe_name(run_id)}.json"

    def set_review(self, repo: str | Path, run_id: str, decision: str, by: str = "") -> dict[str, Any]:
        """Record a person's decision on a `review` verdict, re-sealed."""
        if decision not in ("accepted", "rejected"):
            raise ValueError(decision)
        path = self.run_path(repo, run_id)
        record = json.loads(path.read_text())
        record["review"] = {"decision": decision, "by": by}
        self.save_run(repo, record)
        return self.seal(record)

    # --- logs ----------------------------------------------------------------

    def log_path(self, repo: str | Path, run_id: str, stream: str) -> Path:
        return self.repo_dir(repo) / "logs" / safe_name(run_id) / f"{safe_name(stream)}.log"

    def open_log(self, repo: str | Path, run_id: str, stream: str) -> CappedLog:
        path = self.log_path(repo, run_id, stream)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        return CappedLog(path)

    # --- submits -------------------------------------------------------------

    def submits_used(self, repo: str | Path, branch: str) -> int:
        path = self.repo_dir(repo) / "submits.json"
        data = json.loads(path.read_text()) if path.exists() else {}
        return int(data.get(branch, 0))

    def count_submit(self, repo: str | Path, branch: str) -> int:
        """Add one submit to the branch's count, atomically; returns the new count."""
        folder = self.repo_dir(repo)
        with self.locked(f"submits-{folder.name}"):
            path = folder / "submits.json"
            data = json.loads(path.read_text()) if path.exists() else {}
            data[branch] = int(data.get(branch, 0)) + 1
            self.write_atomic(path.relative_to(self.root), json.dumps(data, sort_keys=True).encode())
        return data[branch]

    def reset_submits(self, repo: str | Path, branch: str) -> None:
        """A person took over and gives the agent its submits back."""
        folder = self.repo_dir(repo)
        with self.locked(f"submits-{folder.name}"):
            path = folder / "submits.json"
            data = json.loads(path.read_text()) if path.exists() else {}
            data.pop(branch, None)
            self.write_atomic(path.relative_to(self.root), json.dumps(data, sort_keys=True).encode())

    def escalated(self, repo: str | Path) -> set[str]:
        """Branches whose cap was reached and a person asked: kept across restarts."""
        path = self.repo_dir(repo) / "escalated.json"
        return set(json.loads(path.read_text())) if path.exists() else set()

    def set_escalated(self, repo: str | Path, branch: str, on: bool) -> None:
        folder = self.repo_dir(repo)
        with self.locked(f"submits-{folder.name}"):
            names = self.escalated(repo)
            names = names | {branch} if on else names - {branch}
            self.write_atomic((folder / "escalated.json").relative_to(self.root), json.dumps(sorted(names)).encode())


class CappedLog:
    """Appends a stream's output up to LOG_CAP bytes, then counts the rest."""

    def __init__(self, path: Path, cap: int = LOG_CAP):
        self.path, self.cap = path, cap
        self.kept = 0
        self.dropped = 0
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._out = os.fdopen(fd, "wb")

    def write(self, text: str) -> None:
        data = text.encode("utf-8", "replace")
        room = self.cap - self.kept
        if room > 0:
            self._out.write(data[:room])
            self.kept += min(room, len(data))
        self.dropped += max(0, len(data) - max(room, 0))

    def close(self) -> None:
        if self.dropped:
            self._out.write(f"\n[gatetui: {self.dropped} more bytes not kept]\n".encode())
        self._out.close()
