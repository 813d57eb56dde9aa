"""The gatetui app: relays the supervisor's events into Textual messages.

Runs are Textual workers, one exclusive group per branch, so a newer head
cancels the run in progress; every worker failure lands in one handler that
opens a modal, never a traceback.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.worker import Worker, WorkerState

from gatetui.backends.base import Backend
from gatetui.backends.choose import BACKEND_NAMES
from gatetui.errors import GateError
from gatetui.inert import inert, inert_line
from gatetui.supervise import events
from gatetui.supervise.serve import SubmitServer
from gatetui.supervise.supervisor import Supervisor
from gatetui.tui.messages import GateFailed, relay
from gatetui.tui.screens.dialogs import ErrorScreen, HelpScreen
from gatetui.tui.screens.lab import LabScreen, LabSource
from gatetui.tui.screens.main import MainScreen


class GatetuiApp(App[None]):
    CSS_PATH = "gatetui.tcss"
    TITLE = "gatetui"
    BINDINGS = [
        Binding("question_mark", "help", "help", key_display="?"),
        Binding("b", "switch_backend", "backend"),
        Binding("q", "quit", "quit"),
    ]

    def __init__(
        self,
        supervisor: Supervisor,
        backend_factory: Callable[[str], Backend] | None = None,
        clock: Callable[[], float] = time.time,
        after_start: Callable[[], Coroutine[Any, Any, None]] | None = None,
        submit_server: SubmitServer | None = None,
        lab_scenarios: Path | None = None,
        lab_rules: Path | None = None,
        lab_source: LabSource | None = None,
    ):
        super().__init__()
        self.supervisor, self.backend_factory, self.after_start = supervisor, backend_factory, after_start
        self.submit_server = submit_server  # the agent's `gatetui submit` socket, while the app is open
        self.lab_scenarios, self.lab_rules, self.lab_source = lab_scenarios, lab_rules, lab_source
        self.main = MainScreen(supervisor, clock, control=supervisor)

    def on_mount(self) -> None:
        s = self.supervisor
        self.sub_title = inert_line(f"{s.repo.name}: {s.pattern} against {s.base}, {s.backend.name} backend")
        self.supervisor.subscribe(self.relay)
        self.hear_backend(s.backend)
        self.push_screen(self.main)
        self.start_supervisor()

    @work(group="supervisor", exit_on_error=False)
    async def start_supervisor(self) -> None:
        await self.supervisor.start(self.launch)
        if self.submit_server is not None:
            await self.submit_server.start()
        if self.after_start is not None:
            self.run_worker(self.after_start(), group="after start", exit_on_error=False)

    def follow_demo(self, branch: str, story: str) -> None:
        """The demo moved `branch` to the agent's commit: keep what its
        scenario does, shown beside its verdict when that comes (the replay
        runs on this loop). The pane itself follows the runs, not the moves
        (`MainScreen.spotlight`): a branch just moved is only queued."""
        self.main.notices.stories[branch] = story
        if self.main.is_mounted:
            self.main.refresh_run()

    def launch(self, key: str, coro: Coroutine[Any, Any, None]) -> Worker[None]:
        return self.run_worker(coro, name=key, group=key, exclusive=True, exit_on_error=False)

    def relay(self, event: events.SupervisorEvent) -> None:
        relay(event, self.main, self)

    @on(GateFailed)
    def gate_failed(self, message: GateFailed) -> None:
        self.push_screen(ErrorScreen(f"the gate could not run on {message.branch}", message.message))

    @on(Worker.StateChanged)
    def worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            error = event.worker.error
            what = str(error) if isinstance(error, GateError) else f"{type(error).__name__}: {error}"
            self.push_screen(ErrorScreen(f"{event.worker.name or 'a task'} stopped", what))

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_lab(self) -> None:
        """The rules lab: a fresh run each time; leaving it cancels its gates."""
        self.push_screen(LabScreen(self.lab_scenarios, self.lab_rules, self.lab_source))

    def action_switch_backend(self) -> None:
        current = self.supervisor.backend.name
        names = BACKEND_NAMES
        name = names[(names.index(current) + 1) % len(names)] if current in names else "local"
        try:
            backend = self.backend_factory(name) if self.backend_factory else None
        except GateError as err:
            self.push_screen(ErrorScreen(f"cannot switch to the {name} backend", str(err)))
            return
        if backend is not None:
            self.hear_backend(backend)
            self.supervisor.set_backend(backend)
            self.sub_title = self.sub_title.rsplit(", ", 1)[0] + f", {name} backend"
            self.notify(f"next runs use the {name} backend")

    def hear_backend(self, backend: Backend) -> None:
        """A backend's own news (Runtime's capacity countdown, a crash sweep)
        becomes a notification; it may come from a worker thread."""
        backend.on_progress = self.backend_said

    def backend_said(self, line: str) -> None:
        try:
            self.call_from_thread(self.notify, inert(line), timeout=4, markup=False)
        except RuntimeError:  # already on the app's own thread
            self.notify(inert(line), timeout=4, markup=False)

    async def on_unmount(self) -> None:
        if self.submit_server is not None:
            await self.submit_server.close()
        await self.supervisor.stop()  # runs cancelled, their workspaces removed
