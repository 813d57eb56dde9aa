"""Opening the TUI from the command line: on a repo, or on the workshop demo."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from gatetui.backends.base import Backend
from gatetui.errors import ExitCode
from gatetui.store import Store
from gatetui.supervisor import Supervisor


def run_tui(repo: Path, base: str, pattern: str, backend: str, state_dir: Path | None,
            make_backend: Callable[[str], Backend]) -> int:
    """Check the input (bad input exits 2 before any screen), then run the app."""
    from gatetui.tui.app import GatetuiApp

    store = Store.open(state_dir)
    supervisor = Supervisor(repo, make_backend(backend), store, base=base, pattern=pattern)
    supervisor.check()
    GatetuiApp(supervisor, make_backend).run()
    return ExitCode.PASS


def run_demo_tui(dest: Path, interval: float, make_backend: Callable[[str], Backend]) -> int:
    """The workshop: every sample in one repo, each agent commit replayed live."""
    from gatetui.demo import replay, write_workshop
    from gatetui.tui.app import GatetuiApp

    workshop = write_workshop(dest / "workshop")
    store = Store.open(dest / "state")
    supervisor = Supervisor(workshop.repo, make_backend("local"), store)
    app = GatetuiApp(supervisor, make_backend, after_start=functools.partial(replay, workshop, interval))
    app.run()
    return ExitCode.PASS
