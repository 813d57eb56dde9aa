"""`gatetui view`: the supervisor's screens, read-only, from its watch stream.

The same main screen as the supervisor's own, drawn from a
`RemoteSupervisor` instead of the supervisor: the branch list, the checks,
the log, digests and credits read the same records. It gates nothing and
has no key that changes anything (the main screen without `control` hides
them; this app has no rules lab and no backend switch). A viewer that fell
behind is told so and watches again from a fresh snapshot; when the
supervisor stops, the screen keeps what it last showed and says so.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from textual import on, work
from textual.app import App
from textual.binding import Binding

from gatetui.errors import GateError
from gatetui.inert import inert, inert_line
from gatetui.supervise import events
from gatetui.supervise.remote import RemoteSupervisor
from gatetui.tui.messages import GateFailed, relay
from gatetui.tui.screens.dialogs import VIEWER_KEYS, HelpScreen
from gatetui.tui.screens.main import MainScreen


class ViewerApp(App[str]):
    """Returns why it could not watch ('' after a plain quit)."""

    CSS_PATH = "gatetui.tcss"
    TITLE = "gatetui viewer"
    ENABLE_COMMAND_PALETTE = False  # its commands act on this process (a screenshot written where it runs)
    BINDINGS = [Binding("question_mark", "help", "help", key_display="?"), Binding("q", "quit", "quit")]

    def __init__(self, remote: RemoteSupervisor, clock: Callable[[], float] = time.time):
        super().__init__()
        self.remote = remote
        self.main = MainScreen(remote, clock)

    def on_mount(self) -> None:
        self.sub_title = f"connecting to {inert_line(str(self.remote.socket))}"
        self.remote.subscribe(self.relay)
        self.push_screen(self.main)
        self.follow()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return action not in ("lab", "switch_backend")  # the supervisor's own screen has them

    @work(group="watch", exclusive=True, exit_on_error=False)
    async def follow(self) -> None:
        """Watch; again after being dropped; until the supervisor goes."""
        while True:
            try:
                ended = await self.remote.follow()
            except GateError as err:
                self.exit(str(err), return_code=int(err.exit_code))
                return
            self.notify(inert(ended.message), severity="warning", timeout=10, markup=False)
            if not ended.dropped:
                self.sub_title = f"{self.sub_title}: the supervisor stopped"
                return

    def relay(self, event: events.SupervisorEvent) -> None:
        if isinstance(event, events.BranchesChanged):
            r = self.remote
            self.sub_title = inert_line(
                f"viewing {r.repo.name}: {r.pattern} against {r.base}, {r.backend.name} backend (read-only)"
            )
        relay(event, self.main, self)

    @on(GateFailed)
    def gate_failed(self, message: GateFailed) -> None:
        """A notice, not a modal: nobody at a viewer is there to close it."""
        text = inert(f"the gate could not run on {message.branch}: {message.message}")
        self.notify(text, severity="error", timeout=15, markup=False)

    def action_help(self) -> None:
        self.push_screen(HelpScreen(VIEWER_KEYS))


def run_view(remote: RemoteSupervisor) -> int:
    """The viewer in this terminal (or a web page's); a stream that cannot
    start ends it with one line on stderr and the error's exit code."""
    app = ViewerApp(remote)
    why = app.run()
    if why:
        print(f"gatetui view: {why}", file=sys.stderr)
    return app.return_code or 0
