"""The suite's own rules hold: a leak fails the test that leaked it, and a
child process is read for the tier mark its test must carry.

A socket left in a reference cycle is only found by the garbage collector,
whenever it next runs: without a collection at each test's teardown, its
ResourceWarning surfaced in some later test on the same worker (a hypothesis
test, once), which then failed for nothing it did.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import tiers
from tests.support.paths import ROOT

LEAKS = """
import gc
import socket


def test_leaks_a_socket_in_a_cycle():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    cycle = [sock]
    cycle.append(cycle)


def test_bystander_collects():
    gc.collect()
"""
MODULE_LEAKS = """
import socket

import pytest


@pytest.fixture(scope="module")
def service():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    cycle = [sock]
    cycle.append(cycle)
    yield sock.getsockname()


def test_first_user(service):
    pass


def test_last_user(service):
    pass
"""
BYSTANDER = "import gc\n\n\ndef test_in_the_next_module():\n    gc.collect()\n"
CONFTEST = (
    "from tests.conftest import collect_after_each_module, collect_after_each_test, "
    "collect_after_the_session  # noqa: F401\n"
)


def outcomes(folder: Path) -> tuple[int, list[str]]:
    """A real pytest run over `folder` with this suite's settings: its exit
    code and, sorted, each outcome line as 'STATUS test_name'."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:xdist",
            "-p",
            "no:randomly",
            "-q",
            "-rA",
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(folder),
            str(folder),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    lines = [
        line.split(" - ")[0] for line in done.stdout.splitlines() if line.startswith(("PASSED ", "FAILED ", "ERROR "))
    ]
    return done.returncode, sorted(f"{line.split(' ')[0]} {line.split('::')[-1]}" for line in lines)


@pytest.mark.drives
def test_a_leaked_socket_fails_the_test_that_leaked_it(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_leak.py").write_text(LEAKS)
    assert outcomes(tmp_path) == (
        1,
        [
            "ERROR test_leaks_a_socket_in_a_cycle",  # at its own teardown
            "PASSED test_bystander_collects",
            "PASSED test_leaks_a_socket_in_a_cycle",  # its body ran; the leak is its teardown's error
        ],
    )


@pytest.mark.drives
def test_a_module_fixtures_leak_fails_its_last_user_not_the_next_module(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_a.py").write_text(MODULE_LEAKS)
    (tmp_path / "test_b.py").write_text(BYSTANDER)
    assert outcomes(tmp_path) == (
        1,
        ["ERROR test_last_user", "PASSED test_first_user", "PASSED test_in_the_next_module", "PASSED test_last_user"],
    )


@pytest.mark.parametrize(
    ("argv", "needs"),
    [
        ([sys.executable, "-m", "pytest", "-q"], {"drives"}),
        (["/usr/bin/go", "test", "./..."], {"drives"}),
        (["sh", "-c", "cd proj && go vet -json ./... > out.json"], {"drives"}),
        (["sh", "-c", "npm ci"], {"drives", "install"}),
        ("node --test test/", {"drives"}),
        ([sys.executable, "-m", "gatetui", "check", "."], {"sandbox"}),
        ([sys.executable, "-c", "print('go')"], set()),  # a word in a script is not a command
        (["git", "commit", "-m", "pytest"], set()),
    ],
)
def test_a_child_process_is_read_for_what_it_needs(argv: list[str] | str, needs: set[str]) -> None:
    """tests/support/tiers.py's reading of a child's argv, which decides the
    mark a test must carry to stay out of `make test-fast`."""
    assert tiers._argv_needs(argv) == needs
