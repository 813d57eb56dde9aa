"""A backend wrapper that closes, when a run ends, every workspace it opened.

The runner closes its workspaces however a run ends, except one cancelled
during the install (the install workspace is not yet the runner's to close).
A workspace's close does nothing the second time (the Workspace protocol),
so what the runner closed already costs nothing here.

The wrapper forwards what the gate reads of a backend, member by member:
the Backend protocol's, and the capabilities the runner reads where a
backend has them. Nothing else reaches the wrapped backend, so a member the
gate starts to read is declared here, never guessed.
"""

from __future__ import annotations

import contextlib

from gatetui.backends.base import Backend, Enforcement, LayerStore, ProgressSink, TreeExporter, Workspace, close_all


class ClosingBackend:
    """The run's backend; `close_all` when the run ends, however it ends.

    Every member follows `self.backend`: the supervisor puts the backend
    chosen when the run starts in place of the one it was made with (the
    `b` key reaches queued runs)."""

    name: str  # the protocol's is a plain attribute: kept in step with the backend's below

    def __init__(self, backend: Backend):
        self.backend = backend
        self.opened: list[Workspace] = []

    @property
    def backend(self) -> Backend:
        return self._backend

    @backend.setter
    def backend(self, backend: Backend) -> None:
        self._backend = backend
        self.name = backend.name

    @property
    def notes(self) -> tuple[str, ...]:
        return self.backend.notes

    @property
    def on_progress(self) -> ProgressSink:
        return self.backend.on_progress

    @on_progress.setter
    def on_progress(self, sink: ProgressSink) -> None:
        self.backend.on_progress = sink

    async def preflight(self, tools: tuple[tuple[str, ...], ...], indexes: tuple[str, ...] = ()) -> None:
        await self.backend.preflight(tools, indexes)

    async def open(self, export: TreeExporter, label: str) -> Workspace:
        workspace = await self.backend.open(export, label)
        self.opened.append(workspace)
        return workspace

    # The Backend protocol's declared capabilities, forwarded.
    @property
    def measured(self) -> bool:
        return self.backend.measured

    async def account(self) -> dict[str, float] | None:
        return await self.backend.account()

    @property
    def isolation(self) -> Enforcement | None:
        return self.backend.isolation

    @property
    def layers(self) -> LayerStore | None:
        return self.backend.layers

    async def close_all(self) -> None:
        with contextlib.suppress(Exception):  # each was closed or tried; the run is over either way
            await close_all(self.opened)
