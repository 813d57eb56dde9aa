"""The cap on Runtime sandboxes at once: whole runs are admitted, never a
deadlock, never past the cap, and a cap no run fits under is one line.

The emulator is given the account's limit too (`max_live`, refusing a create
or fork past it as Runtime does), so a run that went past the cap would be
refused there, not only counted here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gatetui.backends.runtime import RuntimeBackend, RuntimeSettings
from gatetui.backends.runtime_admission import CAP_VARIABLE, SandboxCap, cap_from_env
from gatetui.errors import BackendError, ExitCode
from gatetui.gate.events import RunFinished
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from tests.runtime_emulator.fixtures import running_emulator
from tests.support.repos import MakeRepo

FAST = RuntimeSettings(capacity_wait=5, start_seconds=5, command_grace=5)
CONFIG = 'stack = "python"\ninstall = ["true"]\ntest = "sleep 0.3; echo ok"\ntest_paths = ["tests"]\n'


@pytest.fixture
def tiny_repo(make_repo: MakeRepo) -> Path:
    """An instant install and a suite that sleeps: the gate's shape, cheaply
    (it writes no report, so the runs end `error`; the cap is what is tested)."""
    return make_repo(
        {"gatetui.toml": CONFIG, "tests/test_a.py": "def test_a():\n    pass\n", "a.py": "A = 1\n"}, {"a.py": "A = 2\n"}
    )


async def until(predicate: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Until `predicate()` holds; else fail saying `what` (never happened) within `timeout`."""
    try:
        async with asyncio.timeout(timeout):
            while not predicate():
                await asyncio.sleep(0.01)  # paces the polling; the timeout above bounds it
    except TimeoutError:
        pytest.fail(f"{what} within {timeout} s")


async def gate(repo: Path, cap: SandboxCap, progress: list[str], run: str) -> RunFinished:
    plan = make_plan(GateRequest(repo, "main", "agent/x", run_id=run))
    events = [e async for e in run_gate(plan, RuntimeBackend(settings=FAST, cap=cap, on_progress=progress.append))]
    last = events[-1]
    assert isinstance(last, RunFinished)
    return last


@pytest.mark.sandbox
@pytest.mark.parametrize("limit", [4, pytest.param(5, marks=pytest.mark.slow), pytest.param(9, marks=pytest.mark.slow)])
def test_many_runs_under_a_cap_all_finish_and_never_pass_it(tmp_path: Path, tiny_repo: Path, limit: int) -> None:
    """Six runs at once, each holding an install's sandbox and then four for
    its runs: a per-sandbox semaphore would deadlock here; whole-run
    admission does not."""
    cap, progress = SandboxCap(limit), []
    with running_emulator(tmp_path / "config") as emulator:
        emulator.max_live = limit

        async def every() -> list[RunFinished]:
            return await asyncio.wait_for(
                asyncio.gather(*(gate(tiny_repo, cap, progress, f"run{i}") for i in range(6))), 60
            )

        finished = asyncio.run(every())
        assert (emulator.refused, emulator.peak_live <= limit) == (0, True)
    per_run = min(limit, 5)  # each run reserves room for hidden tests (this repo has none: four live)
    # whole runs side by side, no more: what the cap admitted at once. (How many
    # sandboxes were live at the same moment depends on this machine's load.)
    assert cap.peak == per_run * (limit // per_run)
    assert len(finished) == 6 and all(len(f.results) == 8 for f in finished)
    assert (cap.in_use, cap.runs) == (0, 0)
    assert any(
        line.endswith(f"hold the {limit} sandboxes allowed at once ({CAP_VARIABLE}); this run starts when one ends")
        for line in progress
    )


@pytest.mark.sandbox
def test_no_cap_lets_every_run_overlap(tmp_path: Path, tiny_repo: Path) -> None:
    cap, progress = SandboxCap(None), []
    with running_emulator(tmp_path / "config") as emulator:

        async def every() -> list[RunFinished]:
            return await asyncio.gather(*(gate(tiny_repo, cap, progress, f"run{i}") for i in range(3)))

        asyncio.run(every())
        assert (emulator.refused, emulator.peak_live <= 15) == (0, True)
    # every run admitted at once, none waited: five reserved each (room for
    # hidden tests). How many were live at the same moment is the machine's load.
    assert (cap.peak, cap.in_use, progress) == (15, 0, [])


@pytest.mark.parametrize("limit", [1, 3, 0])
def test_a_cap_no_run_fits_under_is_one_line_before_any_sandbox(tmp_path: Path, tiny_repo: Path, limit: int) -> None:
    with running_emulator(tmp_path / "config") as emulator:
        started = time.monotonic()
        with pytest.raises(BackendError) as refused:
            asyncio.run(gate(tiny_repo, SandboxCap(limit), [], "run1"))
        assert time.monotonic() - started < 10 and emulator.peak_live == 0
    shown = "not a whole number" if limit == 0 else str(limit)
    assert str(refused.value) == (
        f"runtime backend: a gate run needs 4 sandboxes at once (one for each test run) "
        f"but the cap on sandboxes at once (--max-sandboxes or {CAP_VARIABLE}) is {shown}: set it to 4 or more, "
        "or unset it; "
        "`--backend local` needs nothing"
    )
    assert refused.value.exit_code == ExitCode.GATE_ERROR


@pytest.mark.sandbox
def test_a_run_cancelled_while_waiting_gives_nothing_away(tmp_path: Path, make_repo: MakeRepo) -> None:
    """A waiting run that is cancelled (a newer head) leaves the count as it
    was; the run ahead of it still finishes and gives its slots back. The
    run ahead sleeps 3 s a run: at 0.3 s it could end, under load, before
    the second had even asked for its slots."""
    cap = SandboxCap(4)
    slow = make_repo(
        {"gatetui.toml": CONFIG.replace("sleep 0.3", "sleep 3"), "tests/test_a.py": "", "a.py": "A = 1\n"},
        {"a.py": "A = 2\n"},
    )

    async def scenario() -> None:
        first = asyncio.create_task(gate(slow, cap, [], "run1"))
        await until(lambda: cap.runs == 1, "the first run was never admitted")
        second = asyncio.create_task(gate(slow, cap, [], "run2"))
        await until(lambda: len(cap._waiting) == 1, "the second run never waited on the cap")
        assert (cap.in_use, len(cap._waiting)) == (4, 1)
        second.cancel()
        with pytest.raises(asyncio.CancelledError):
            await second
        await first

    with running_emulator(tmp_path / "config"):
        asyncio.run(scenario())
    assert (cap.in_use, cap.runs, len(cap._waiting)) == (0, 0, 0)


def test_the_cap_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for raw, limit in (("", None), ("unlimited", None), ("4", 4), ("four", 0)):
        monkeypatch.setenv(CAP_VARIABLE, raw)
        assert cap_from_env() == limit
        assert RuntimeSettings().max_sandboxes == limit
