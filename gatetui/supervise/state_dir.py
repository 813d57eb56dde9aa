"""The state directory itself: private, written atomically, sealed with a key.

The directory's rules (0700 and the supervisor's own, atomic writes, the
verdict key and its seals) apart from what is kept in it (store.py), so
each stays small.
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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from gatetui.errors import BadInput


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


class StateDir:
    def __init__(self, root: Path):
        self.root = root
        self.note = ""  # what opening it changed, for the person (a mode made private again)

    @classmethod
    def open(cls, path: Path | None = None) -> Self:
        """Create or check the state directory; refuse one others can enter."""
        root = (path or default_state_dir()).absolute()
        if root.exists() and not root.is_dir():
            raise StoreError(f"the state directory {root} is not a directory (pass --state-dir)")
        try:
            root.mkdir(parents=True, exist_ok=True, mode=0o700)
            info = root.lstat()
        except OSError as err:
            raise StoreError(
                f"cannot create the state directory {root}: {err.strerror} (pass --state-dir or set XDG_STATE_HOME)"
            ) from None
        if not stat.S_ISDIR(info.st_mode):
            raise StoreError(f"the state directory {root} is not a directory (pass --state-dir)")
        if info.st_uid != os.geteuid():
            raise StoreError(
                f"the state directory {root} belongs to uid {info.st_uid}, not to you "
                "(pass --state-dir with a directory of your own)"
            )
        store = cls(root)
        mode = stat.S_IMODE(info.st_mode)
        if mode != 0o700:
            root.chmod(0o700)  # ours, so make it private again rather than refuse, and say so
            if mode & 0o077:
                store.note = (
                    f"the state directory {root} was open to others (mode {mode:o}): made it 700; "
                    "hidden tests kept there may have been read, so consider replacing them"
                )
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

    def repo_dir(self, repo: str | Path) -> Path:
        key = repo_key(repo)
        folder = self.root / "repos" / key
        if not (folder / "repo.json").exists():
            self.write_atomic(f"repos/{key}/repo.json", json.dumps({"path": str(Path(repo).resolve())}).encode())
        return folder

    def hidden_dir(self, repo: str | Path) -> Path:
        return self.repo_dir(repo) / "hidden"


def safe_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "-_." else "-" for c in name).strip(".")
    return cleaned or "unnamed"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
