"""Choosing a backend by name: one place for the CLI, the TUI, the demo and the lab."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatetui.backends.choose import BACKEND_NAMES, choose_backend
from gatetui.backends.local import LocalBackend
from gatetui.backends.runtime import RuntimeBackend
from gatetui.errors import BackendError, ExitCode


def test_every_name_chooses_the_backend_of_that_name(tmp_path: Path) -> None:
    chosen = [choose_backend(name, work_root=tmp_path) for name in BACKEND_NAMES]
    assert [backend.name for backend in chosen] == ["local", "runtime"]
    assert [type(backend) for backend in chosen] == [LocalBackend, RuntimeBackend]


def test_the_local_backend_works_under_the_root_given(tmp_path: Path) -> None:
    backend = choose_backend("local", work_root=tmp_path / "work")
    assert isinstance(backend, LocalBackend) and backend.work_root == tmp_path / "work"


def test_the_runtime_backend_takes_the_cap_and_the_sink_given() -> None:
    heard: list[str] = []
    backend = choose_backend("runtime", on_progress=heard.append, max_sandboxes=6)
    assert isinstance(backend, RuntimeBackend)
    backend.on_progress("waiting for room")
    assert (backend.settings.max_sandboxes, heard) == (6, ["waiting for room"])


def test_an_unknown_name_is_a_gate_error_naming_the_choices() -> None:
    with pytest.raises(BackendError) as raised:
        choose_backend("cloud")
    assert (str(raised.value), raised.value.exit_code) == (
        "unknown backend 'cloud': use --backend local (it needs nothing) or runtime",
        ExitCode.GATE_ERROR,
    )
