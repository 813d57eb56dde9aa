"""A backend wrapper that closes, when a run ends, every workspace it opened.

The runner closes its workspaces however a run ends, except one cancelled
during the install (the install workspace is not yet the runner's to close).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gatetui.backends.base import Backend, close_all


class ClosingBackend:
    """The run's backend; `close_all` when the run ends, however it ends."""

    def __init__(self, backend: Backend):
        self.backend = backend
        self.opened: list[OnceWorkspace] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)

    async def open(self, export: Callable[[Path], None], label: str) -> Any:
        workspace = OnceWorkspace(await self.backend.open(export, label))
        self.opened.append(workspace)
        return workspace

    async def close_all(self) -> None:
        with contextlib.suppress(Exception):  # each was closed or tried; the run is over either way
            await close_all(self.opened)


class OnceWorkspace:
    """A workspace whose close runs once: the runner may have closed it already."""

    def __init__(self, workspace: Any):
        self.workspace, self.closed = workspace, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.workspace, name)

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            await self.workspace.close()
