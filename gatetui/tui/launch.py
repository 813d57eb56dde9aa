"""Opening the TUI from the command line: on a repo, or on the workshop demo."""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gatetui.backends.base import Backend
from gatetui.errors import ExitCode
from gatetui.supervise.store import Store
from gatetui.supervise.supervisor import Supervisor

if TYPE_CHECKING:  # the app and the demo are imported when a screen opens, not by the CLI's parser
    from gatetui.lab.demo import Workshop
    from gatetui.tui.app import GatetuiApp


def run_tui(
    repo: Path,
    base: str,
    pattern: str,
    backend: str,
    state_dir: Path | None,
    make_backend: Callable[[str], Backend],
    socket: Path | None = None,
    cap: int | None = None,
    lab_scenarios: Path | None = None,
    lab_rules: Path | None = None,
) -> int:
    """Check the input (bad input exits 2 before any screen), then run the
    app, with the submit socket open while it runs."""
    from gatetui.supervise.serve import SubmitServer
    from gatetui.tui.app import GatetuiApp

    store = Store.open(state_dir)
    supervisor = Supervisor(repo, make_backend(backend), store, base=base, pattern=pattern, submit_cap=cap)
    supervisor.check()
    if store.note:  # said before the screen takes the terminal, where it stays readable
        print(f"gatetui: {store.note}", file=sys.stderr, flush=True)
    GatetuiApp(
        supervisor,
        make_backend,
        submit_server=SubmitServer(supervisor, socket),
        lab_scenarios=lab_scenarios,
        lab_rules=lab_rules,
    ).run()
    return ExitCode.PASS


def run_demo_tui(dest: Path, interval: float, make_backend: Callable[[str], Backend]) -> int:
    """The workshop: every sample in one repo, each agent commit replayed live."""
    from gatetui.lab.demo import install_hidden, write_workshop
    from gatetui.supervise.serve import SubmitServer

    workshop = write_workshop(dest / "workshop")
    store = Store.open(dest / "state")
    install_hidden(workshop, store)
    supervisor = Supervisor(workshop.repo, make_backend("local"), store)
    app = demo_app(workshop, supervisor, interval, make_backend)
    app.submit_server = SubmitServer(supervisor)  # the room's viewers watch through it (`gatetui view`, `web`)
    app.run()
    return ExitCode.PASS


def demo_app(
    workshop: Workshop,
    supervisor: Supervisor,
    interval: float,
    make_backend: Callable[[str], Backend] | None = None,
    first_after: float = 2.0,
    clock: Callable[[], float] = time.time,
) -> GatetuiApp:
    """The app as the demo runs it (its tests build it here too): the
    replay paced to the supervisor's gate slots, the pane following the
    runs with something to show, each scenario's notice beside its verdict."""
    from gatetui.lab.demo import replay
    from gatetui.tui.app import GatetuiApp
    from gatetui.tui.follow import Spotlight

    app = GatetuiApp(supervisor, make_backend, clock)
    app.main.spotlight = Spotlight()
    app.main.notices.stories.update(workshop.stories)  # each shown once its branch has a verdict
    app.main.notices.expects.update(workshop.expects)
    app.after_start = functools.partial(replay, workshop, interval, first_after, moved=app.follow_demo, pace=supervisor)
    return app
