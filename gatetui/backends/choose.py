"""Choosing a backend by name: the one place that knows which names exist.

`gatetui check`, `serve`, standalone `submit`, the TUI (and its `b` key), the
demo and the lab all come here, so a new backend is one entry in
`BACKEND_NAMES` and one branch below. Each backend is imported only when
chosen: the local fallback never needs `withruntime`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gatetui.backends.base import Backend, ProgressSink
from gatetui.errors import BackendError

BACKEND_NAMES = ("local", "runtime")  # the order the TUI's `b` key cycles through


def to_stderr(line: str) -> None:
    """The headless commands' sink: a backend's own news (a capacity
    countdown) goes where their progress goes, never onto stdout."""
    print(line, file=sys.stderr, flush=True)


def choose_backend(
    name: str,
    *,
    on_progress: ProgressSink | None = None,
    max_sandboxes: int | None = None,
    work_root: Path | None = None,
    layers: Path | None = None,
) -> Backend:
    """`on_progress` hears the backend's own news (stderr by default);
    `max_sandboxes` overrides the environment's Runtime cap, `work_root`
    the local backend's workspace folder and `layers` where it keeps
    dependency layers (None: none kept): each backend ignores what it has no use for."""
    if name == "local":
        return _local(work_root, layers)
    if name == "runtime":
        return _runtime(on_progress or to_stderr, max_sandboxes, layers is not None)
    raise BackendError(f"unknown backend {name!r}: use --backend local (it needs nothing) or runtime")


def _local(work_root: Path | None, layers: Path | None) -> Backend:
    from gatetui.backends.local import LocalBackend

    return LocalBackend(work_root=work_root, layers=layers)


def _runtime(on_progress: ProgressSink, max_sandboxes: int | None, layers: bool) -> Backend:
    """`layers`: keep dependency layers as snapshots on the account, where
    the local backend would keep them in a folder."""
    from gatetui.backends.runtime import RuntimeBackend, RuntimeSettings

    settings = (
        RuntimeSettings(layers=layers)
        if max_sandboxes is None
        else RuntimeSettings(max_sandboxes=max_sandboxes, layers=layers)
    )
    return RuntimeBackend(settings=settings, on_progress=on_progress)
