"""A real `gatetui serve` for `gatetui submit` to talk to (a session fixture),
the project it supervises, and the agent's clone as git and the file system
see it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gatetui.supervise.serve import default_socket
from tests.support.repos import GIT_ENV, git, write_tree

AGENT_UID = 431_000 + os.getpid() % 1000  # outside the gate's run uids

SECRET = "the supervisor's secret: 7e1f0c\n"

CALC = "def add(a, b):\n    return a + b\n"

TESTS = (
    "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
    "def test_zero():\n    assert add(0, 0) == 0\n"
)

BASE = {"pyproject.toml": '[project]\nname = "calc"\nversion = "0.1"\n', "calc.py": CALC, "tests/test_calc.py": TESTS}

BROKEN = "def add(a, b):\n    return a * b\n"  # add(1, 2) == 2: test_add fails; add(0, 0) still 0

SAME_SIZE = "def add(a, b):\n    return b + a\n"  # as long as CALC: only the content tells them apart


@dataclass
class Served:
    """A supervisor (`gatetui serve`) over `repo`; its log on stderr in `log`."""

    repo: Path
    state: Path
    log: Path
    root: Path

    def clone(self, name: str, branch: str) -> Path:
        """The agent's working copy: a clone, on a new branch from main."""
        dest = self.root / name
        git(self.root, "clone", "-q", str(self.repo), str(dest))
        git(dest, "checkout", "-qb", branch)
        return dest

    def said(self) -> str:
        return self.log.read_text()


def make_supervised(root: Path) -> Path:
    repo = root / "supervised"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    write_tree(repo, BASE)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    return repo


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("served")
    repo = make_supervised(root)
    state, log = root / "state", root / "serve.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gatetui", "serve", str(repo), "--state-dir", str(state)],
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = time.monotonic() + 20
        while "submit socket" not in log.read_text():
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "gatetui serve did not start"
            time.sleep(0.05)
        yield Served(repo, state, log, root)
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        assert proc.wait(timeout=20) == 0
    assert not default_socket(repo).parent.exists()  # the socket and its folder are removed on the way out
    assert log.read_text().endswith("gatetui serve: stopped; runs in progress were cancelled and cleaned up\n")


def git_out(repo: Path, *args: str) -> str:
    """git's stdout as it is (`git` strips it, and with it porcelain's leading space)."""
    return subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, capture_output=True, text=True, check=True).stdout


def next_second() -> None:
    """Sleep into the next whole second of the clock file times use."""
    time.sleep(1.0 - time.time() % 1.0 + 0.01)


def edited_in_the_clones_second(clone: Callable[[str], Path], name: str) -> Path:
    """A fresh clone (`clone(name)`) whose calc.py is edited to other text of
    the same size within the second git checked it out, the index written
    in that second too: the index's stat data (size, mtime in seconds) then
    matches the edited file, and only git's racily-clean check, which holds
    while the index is no newer than that second, sees the edit. A retry
    when the clock crossed a second meanwhile."""
    for attempt in range(5):
        next_second()
        start = time.time()
        copy = clone(f"{name}-{attempt}")
        (copy / "calc.py").write_text(SAME_SIZE)
        if int((copy / "calc.py").stat().st_mtime) == int(start) == int((copy / ".git" / "index").stat().st_mtime):
            return copy
    raise AssertionError("five clones in a row crossed a second: the machine is too slow for this test")


def untouched(clone: Path) -> tuple[bytes, int, str, list[str]]:
    """What a submit refused before its commit must leave as it was: the
    index's bytes and mtime, HEAD, the objects."""
    index = clone / ".git" / "index"
    objects = sorted(str(p.relative_to(clone)) for p in (clone / ".git" / "objects").rglob("*") if p.is_file())
    return index.read_bytes(), index.stat().st_mtime_ns, git(clone, "rev-parse", "HEAD"), objects
