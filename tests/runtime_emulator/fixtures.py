"""Pytest fixtures: an emulator per test (or per module), the SDK pointed at
it, and the promise checked at the end that no sandbox is left alive."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runtime_emulator.server import Emulator

KEY = f"rtk_test_{uuid.uuid4().hex}"  # a made-up key: the emulator accepts only this one


@contextlib.contextmanager
def running_emulator(config_home: Path) -> Iterator[Emulator]:
    """The emulator, the SDK's environment pointing at it (no proxy, no
    saved login), and on the way out: every sandbox was deleted."""
    emulator = Emulator(KEY)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RUNTIME_API_URL", emulator.url)
        patch.setenv("RUNTIME_API_KEY", KEY)
        patch.setenv("NO_PROXY", "127.0.0.1,localhost")
        patch.setenv("XDG_CONFIG_HOME", str(config_home))
        try:
            yield emulator
        finally:
            live = emulator.live()
            emulator.close()
    assert live == [], f"sandboxes left alive: {live}"


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[Emulator]:
    with running_emulator(tmp_path / "config") as emu:
        yield emu
