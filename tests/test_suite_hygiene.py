"""The suite's own rules hold: a leak fails the test that leaked it.

A socket left in a reference cycle is only found by the garbage collector,
whenever it next runs: without the collection at each test's teardown, its
ResourceWarning surfaced in some later test on the same worker (a hypothesis
test, once), which then failed for nothing it did.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.as_user import ROOT

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


def test_a_leaked_socket_fails_the_test_that_leaked_it(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text("from tests.conftest import leaks_fail_the_test_that_leaked  # noqa: F401\n")
    (tmp_path / "test_leak.py").write_text(LEAKS)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:randomly", "-q", "-rA",
         "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT, timeout=120)
    summary = sorted(line.split(" - ")[0].split(" ")[0] + " " + line.split(" - ")[0].split("::")[-1]
                     for line in done.stdout.splitlines() if line.startswith(("PASSED ", "FAILED ", "ERROR ")))
    assert (done.returncode, summary) == (1, [
        "ERROR test_leaks_a_socket_in_a_cycle",  # at its own teardown
        "PASSED test_bystander_collects",
        "PASSED test_leaks_a_socket_in_a_cycle",  # its body ran; the leak is its teardown's error
    ]), done.stdout
