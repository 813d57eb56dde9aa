"""A supervisor's surroundings without a sandbox: a small project and agent
commits on it, a backend that gates nothing and answers as scripted, and
waiting on a condition or a ref watcher rather than sleeping."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from gatetui.backends.base import CommandResult
from gatetui.errors import BackendError
from gatetui.supervise.ref_watcher import RefWatcher

# A project of one function and its test, and two agent commits on it:
# HEAD changes the function, SKIPPED skips the test.
BASE = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1"\n',
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}
HEAD = {"calc.py": "def add(a, b):\n    return b + a\n"}
SKIPPED = {
    "tests/test_calc.py": "import pytest\nfrom calc import add\n\n\n@pytest.mark.skip\ndef test_add():\n    assert add(1, 2) == 3\n"
}


async def watching(watcher: RefWatcher, timeout: float = 10.0) -> None:
    """Until the watcher's file watch is installed and the heads re-read under it."""
    try:
        async with asyncio.timeout(timeout):
            await watcher.ready.wait()
    except TimeoutError:
        pytest.fail(f"the watcher never became ready within {timeout} s")


class FakeWorkspace:
    label = "fake"
    path = "/ws"

    def __init__(self, backend: FakeBackend):
        self.backend, self.closed = backend, False

    async def run(
        self,
        command: str,
        *,
        timeout: float,
        on_output: Callable[[str], None],
        env: Mapping[str, str] | None = None,
        network: bool = True,
    ) -> CommandResult:
        on_output(f"ran {command}\n")
        await self.backend.release.wait()
        return CommandResult(0, 0.5, 0.25, 1 << 20)

    def report_path(self, name: str) -> str:
        return f"/reports/{name}"

    async def read_report(self, name: str) -> bytes | None:
        return None

    async def write_files(self, files: Mapping[str, bytes | None]) -> None:
        return None

    async def fork(self, count: int) -> list[FakeWorkspace]:
        return [FakeWorkspace(self.backend) for _ in range(count)]

    async def close(self) -> None:
        if not self.closed:  # as every workspace: a second close does nothing
            self.closed = True
            self.backend.closed += 1


class FakeBackend:
    """Commands wait for `release`; counts workspaces opened and closed."""

    name = "fake"
    notes: tuple[str, ...] = ()
    measured = False
    isolation = None
    layers = None

    async def account(self) -> None:
        return None

    def __init__(self, released: bool = True, preflight_error: str = ""):
        self.release = asyncio.Event()
        if released:
            self.release.set()
        self.opened = self.closed = 0
        self.preflight_error = preflight_error

    async def preflight(self, tools: tuple[tuple[str, ...], ...], indexes: tuple[str, ...] = ()) -> None:
        if self.preflight_error:
            raise BackendError(self.preflight_error)

    async def open(self, export: Callable[[Path], None], label: str) -> FakeWorkspace:
        self.opened += 1
        return FakeWorkspace(self)


async def until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Until `predicate()` holds; a failure names where the awaited condition is written."""
    try:
        async with asyncio.timeout(timeout):
            while not predicate():
                await asyncio.sleep(0.01)
    except TimeoutError:
        code = predicate.__code__
        pytest.fail(
            f"the condition at {Path(code.co_filename).name}:{code.co_firstlineno} did not hold within {timeout} s"
        )
