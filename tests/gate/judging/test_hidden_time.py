"""The hidden run's time is bounded by head's own runs: library code that
reads the hidden tests and stalls on what they hold tells the agent at most
what the bound lets through, and the check fails in the words of any other
hidden failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gatetui.backends.base import CommandResult
from gatetui.cli.main import main
from gatetui.gate.checks import Status
from gatetui.gate.judging import hidden_time
from gatetui.gate.judging.hidden import judge_hidden
from gatetui.gate.reports.junit import Outcome
from gatetui.supervise.gate_inputs import repo_state
from tests.support.hidden import BASE, HIDDEN_SOURCE, hidden, results, run
from tests.support.repos import MakeRepo


def test_the_bound_is_three_times_heads_slowest_run_and_ten_seconds() -> None:
    runs = [CommandResult(0, 2.0), CommandResult(0, 4.5), CommandResult(1, 3.0)]
    assert hidden_time.bound(runs) == 3 * 4.5 + 10
    assert hidden_time.bound([]) == 10.0


def test_a_run_past_the_bound_fails_without_saying_it_was_slow() -> None:
    tests = hidden({"tests/test_h.py": HIDDEN_SOURCE})
    passed = results(test_two=Outcome.PASSED, test_five=Outcome.PASSED)
    slow = judge_hidden(run(passed, CommandResult(0, 30.5)), tests, limit=30.0)
    assert (slow.status, slow.detail) == (Status.FAIL, "the hidden tests did not pass")
    inside = judge_hidden(run(passed, CommandResult(0, 29.9)), tests, limit=30.0)
    assert (inside.status, inside.detail) == (Status.PASS, "2 of 2 hidden tests passed")


def test_the_person_reads_why_on_the_hidden_stream() -> None:
    words = hidden_time.why(CommandResult(None, 14.0, timed_out=True), 13.0, [CommandResult(0, 1.0)])
    assert words.strip() == (
        "the hidden run was stopped or judged at its bound: 14.0 s, over 3 x head's slowest run (1.0 s) + 10 s = 13.0 s"
    )


# double is right; it stalls only when the hidden test file is in the tree
# and holds the input it checks, so the agent would time its submits.
READS_AND_SLEEPS = (
    "import os, time\n\n\ndef double(x):\n"
    "    for folder, _, names in os.walk('.'):\n"
    "        for name in names:\n"
    "            if 'hidden' in name and b'double(5)' in open(os.path.join(folder, name), 'rb').read():\n"
    "                time.sleep(45)\n"
    "    return x + x\n"
)
READS_AND_SPINS = (
    "import glob, time\n\n"
    "_HIDDEN = any('double(5)' in open(p).read() for p in glob.glob('**/*hidden*.py', recursive=True))\n\n\n"
    "def double(x):\n"
    "    end = time.monotonic() + (45 if _HIDDEN else 0)\n"
    "    while time.monotonic() < end:\n"
    "        pass\n"
    "    return x + x\n"
)


@pytest.mark.sandbox
@pytest.mark.install
@pytest.mark.parametrize(
    "library",
    [READS_AND_SLEEPS, pytest.param(READS_AND_SPINS, marks=pytest.mark.slow)],  # spins in CI (`make test-slow`)
    ids=["sleeps", "spins"],
)
def test_library_code_that_stalls_on_the_hidden_tests_fails_the_hidden_check(
    make_repo: MakeRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], library: str
) -> None:
    repo = make_repo(BASE, {"mathlib/__init__.py": library})
    folder = repo_state(tmp_path / "state", repo) / "hidden" / "math" / "tests"
    folder.mkdir(parents=True)
    (folder / "test_hidden_math.py").write_bytes(HIDDEN_SOURCE)
    code = main(
        ["check", str(repo), "--base", "main", "--head", "agent/x", "--json", "--state-dir", str(tmp_path / "state")]
    )
    data = json.loads(capsys.readouterr().out)
    checks = {c["id"]: (c["status"], c["detail"]) for c in data["checks"]}
    assert (code, data["verdict"], checks["runs"][0]) == (1, "fail", "pass")
    assert checks["hidden"] == ("fail", "the hidden tests did not pass")
    assert data["seconds"] < 40  # stopped at its bound, not after the stall
