"""What a gate run takes from the supervisor's state directory.

The gate never opens the state directory itself (the runner is store-free):
its callers (`gatetui check --state-dir`, the supervisor) read the repo's
hidden tests here and hand the gate a baseline cache kept here. Reading
creates nothing, so a plain `check` leaves no state directory behind; the
first cache write opens the store, which makes the directory 0700.

Layout (beside the store's): repos/KEY/hidden/ (hidden tests, by folder),
repos/KEY/baseline/KEY.json (base's outcomes, one record per base commit
and profile).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from gatetui.errors import BadInput
from gatetui.gate.api import GateInputs
from gatetui.gate.judging.hidden import read_hidden
from gatetui.supervise.store import Store, default_state_dir, repo_key


def repo_state(state_dir: Path | None, repo: Path) -> Path:
    """The repo's folder in the state directory, whether or not it exists."""
    return (state_dir or default_state_dir()).absolute() / "repos" / repo_key(repo)


def hidden_folder(state_dir: Path | None, repo: Path) -> Path:
    """Where the repo's hidden tests live (Store.hidden_dir, without opening a store)."""
    return repo_state(state_dir, repo) / "hidden"


def hidden_tests(state_dir: Path | None, repo: Path) -> dict[str, bytes]:
    """Every file of the repo's hidden folder, by path relative to it."""
    return read_hidden(hidden_folder(state_dir, repo))


def private_state(state_dir: Path | None) -> str:
    """Make an existing state directory private again (as Store.open does)
    and say so: hidden tests in a folder others could read may have been
    read. "" when it was private, or is not there, or is not ours to fix."""
    root = (state_dir or default_state_dir()).absolute()
    try:
        info = root.stat()
    except OSError:
        return ""
    mode = stat.S_IMODE(info.st_mode)
    if not mode & 0o077 or info.st_uid != os.geteuid():
        return ""
    root.chmod(0o700)
    return (
        f"the state directory {root} was open to others (mode {mode:o}): made it 700; hidden tests kept "
        "there may have been read, so consider replacing them"
    )


def gate_inputs(state_dir: Path | None, repo: Path, store: Store | None = None) -> GateInputs:
    """What a gate of `repo` takes from the state directory: its hidden
    tests, where they were looked for, and the cache of base's runs. The
    same for `check`, standalone `submit` and the supervisor (which passes
    its open `store`), so a hidden test configured for one judges in all."""
    folder = store.hidden_dir(repo) if store is not None else hidden_folder(state_dir, repo)
    return GateInputs(
        hidden=hidden_tests(state_dir, repo), hidden_from=str(folder), baseline_cache=StateCache(state_dir, repo, store)
    )


def headless_inputs(state_dir: Path | None, repo: Path, err: TextIO) -> GateInputs:
    """`gate_inputs` for a command run by hand: a state directory left open
    to others is made private again and said so on `err`, and one that
    cannot be read is bad input (exit 2), not a gate error."""
    try:
        opened = private_state(state_dir)
        if opened:
            print(f"gatetui: {opened}", file=err)
        return gate_inputs(state_dir, repo)
    except (OSError, ValueError) as error:
        raise BadInput(f"cannot read the hidden tests in the state directory: {error}") from None


class StateCache:
    """The baseline cache in the state directory (gate.baseline.BaselineCache)."""

    def __init__(self, state_dir: Path | None, repo: Path, store: Store | None = None):
        self.state_dir = (state_dir or default_state_dir()).absolute()
        self.repo = repo
        self._store = store

    def _rel(self, key: str) -> str:
        safe = "".join(c for c in key if c.isalnum() or c in "-_")
        return f"repos/{repo_key(self.repo)}/baseline/{safe}.json"

    def get(self, key: str) -> Mapping[str, Any] | None:
        path = self.state_dir / self._rel(key)
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, record: Mapping[str, Any]) -> None:
        store = self._store or Store.open(self.state_dir)
        store.repo_dir(self.repo)  # names the repo's folder (repo.json) like every other record
        store.write_atomic(self._rel(key), json.dumps(record, sort_keys=True).encode())
