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
import fcntl
import hashlib
import hmac
import json
import os
import secrets
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gatetui.backends.process import pid_alive
from gatetui.errors import BadInput

LOG_CAP = 4 << 20  # bytes of output kept per stream in the history


class StoreError(BadInput):
    """The state directory cannot be used as it is; says what to do."""


def default_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "gatetui"


def repo_key(repo: str | Path) -> str:
    return hashlib.sha256(str(Path(repo).resolve()).encode()).hexdigest()[:16]


def seal_of(key: bytes, record: dict[str, Any]) -> str:
    """HMAC-SHA256 over the record's canonical JSON, without its seal."""
    body = {k: v for k, v in record.items() if k != "seal"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return hmac.new(key, canonical, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Verification:
    ok: bool
    reason: str


class Store:
    def __init__(self, root: Path):
        self.root = root
        self.note = ""  # what opening it changed, for the person (a mode made private again)

    @classmethod
    def open(cls, path: Path | None = None) -> Store:
        """Create or check the state directory; refuse one others can enter."""
        root = (path or default_state_dir()).absolute()
        if root.exists() and not root.is_dir():
            raise StoreError(f"the state directory {root} is not a directory (pass --state-dir)")
        try:
            root.mkdir(parents=True, exist_ok=True, mode=0o700)
            info = root.lstat()
        except OSError as err:
            raise StoreError(f"cannot create the state directory {root}: {err.strerror} "
                             "(pass --state-dir or set XDG_STATE_HOME)") from None
        if not stat.S_ISDIR(info.st_mode):
            raise StoreError(f"the state directory {root} is not a directory (pass --state-dir)")
        if info.st_uid != os.geteuid():
            raise StoreError(f"the state directory {root} belongs to uid {info.st_uid}, not to you "
                             "(pass --state-dir with a directory of your own)")
        store = cls(root)
        mode = stat.S_IMODE(info.st_mode)
        if mode != 0o700:
            root.chmod(0o700)  # ours, so make it private again rather than refuse, and say so
            if mode & 0o077:
                store.note = (f"the state directory {root} was open to others (mode {mode:o}): made it 700; "
                              "hidden tests kept there may have been read, so consider replacing them")
        return store

    # --- atomic files ------------------------------------------------------

    def write_atomic(self, rel: str | Path, data: bytes, mode: int = 0o600) -> Path:
        target = self.root / rel
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _fsync_dir(target.parent)
        return target

    def read_json(self, rel: str | Path) -> Any:
        return json.loads((self.root / rel).read_text())

    @contextlib.contextmanager
    def locked(self, name: str) -> Iterator[None]:
        """An exclusive lock between supervisors sharing this directory."""
        path = self.root / "locks" / name
        path.parent.mkdir(exist_ok=True, mode=0o700)
        with open(path, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    # --- the verdict key and seals -------------------------------------------

    def key(self) -> bytes:
        path = self.root / "key"
        with self.locked("key"):
            if not path.exists():
                self.write_atomic("key", secrets.token_bytes(32), 0o600)
        return path.read_bytes()

    def seal(self, record: dict[str, Any]) -> dict[str, Any]:
        return {**record, "seal": seal_of(self.key(), record)}

    def verify(self, record_path: Path) -> Verification:
        try:
            record = json.loads(record_path.read_text())
        except (OSError, ValueError) as err:
            return Verification(False, f"cannot read {record_path}: {err}")
        if not isinstance(record, dict) or not isinstance(record.get("seal"), str):
            return Verification(False, "the record has no seal")
        if hmac.compare_digest(record["seal"], seal_of(self.key(), record)):
            return Verification(True, "the seal matches: the record is as the gate wrote it")
        return Verification(False, "the seal does not match: the record was altered, or sealed with another key")

    # --- history -------------------------------------------------------------

    def repo_dir(self, repo: str | Path) -> Path:
        key = repo_key(repo)
        folder = self.root / "repos" / key
        if not (folder / "repo.json").exists():
            self.write_atomic(f"repos/{key}/repo.json", json.dumps({"path": str(Path(repo).resolve())}).encode())
        return folder

    def save_run(self, repo: str | Path, record: dict[str, Any]) -> Path:
        """Seal and keep a finished run's record; returns where it is."""
        run_id = _safe_name(str(record["run_id"]))
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
        return self.repo_dir(repo) / "runs" / f"{_safe_name(run_id)}.json"

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
        return self.repo_dir(repo) / "logs" / _safe_name(run_id) / f"{_safe_name(stream)}.log"

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
            self.write_atomic((folder / "escalated.json").relative_to(self.root),
                              json.dumps(sorted(names)).encode())

    def hidden_dir(self, repo: str | Path) -> Path:
        return self.repo_dir(repo) / "hidden"

    # --- runs under way (crash recovery) ------------------------------------------

    def begin_active(self, run_id: str, info: dict[str, Any]) -> None:
        self.write_atomic(f"active/{_safe_name(run_id)}.json",
                          json.dumps({**info, "run_id": run_id, "pid": os.getpid()}).encode())

    def end_active(self, run_id: str) -> None:
        (self.root / "active" / f"{_safe_name(run_id)}.json").unlink(missing_ok=True)

    def orphans(self) -> list[dict[str, Any]]:
        """Runs whose supervisor died before cleaning up."""
        folder = self.root / "active"
        found = []
        for path in folder.glob("*.json") if folder.is_dir() else ():
            with contextlib.suppress(OSError, ValueError):
                info = json.loads(path.read_text())
                if not pid_alive(int(info.get("pid", 0))):
                    found.append(info)
        return found


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


def _safe_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "-_." else "-" for c in name).strip(".")
    return cleaned or "unnamed"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
