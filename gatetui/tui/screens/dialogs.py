"""Modal dialogs: the help (`?`), a check's full detail, and a gate error with what to do."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from gatetui.inert import inert

KEYS = (
    ("r", "rerun: gate the selected branch's head again"),
    ("c", "cancel the selected branch's run in progress (its workspace is removed)"),
    ("b", "switch backend (local / runtime) for the next runs"),
    ("v", "open review: both versions of each changed sealed file (when old_tests failed)"),
    ("y", "copy the verdict block (one line per check) to the clipboard"),
    ("enter", "on a run in the runs list: show that run (history included); on a check: its full detail"),
    ("l", "rules lab: gate every scenario under the rules, the matrix filling in live (r re-runs)"),
    ("g", "after an escalation: give the selected branch its submits back"),
    ("a / x", "in the review: accept / reject the run (kept, sealed, with the verdict record)"),
    ("up/down", "pick a branch, or a check to see its output"),
    ("p", "under 120 columns: show the Digests and Credits panes instead of the checks and output (p: back)"),
    ("tab", "move between the panes (shift+tab: back)"),
    ("escape", "close this help, a dialog or the review"),
    ("?", "this help"),
    ("q", "quit (runs in progress are cancelled and cleaned up)"),
)


VIEWER_KEYS = tuple((key, what) for key, what in KEYS if key in ("enter", "up/down", "p", "tab", "escape", "?", "y"))


class HelpScreen(ModalScreen[None]):
    """The keys: a viewer's help (`keys` = VIEWER_KEYS) names only those that change nothing."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "close")]

    def __init__(self, keys: tuple[tuple[str, str], ...] = KEYS):
        super().__init__()
        self.keys = keys

    def compose(self) -> ComposeResult:
        lines = "\n".join(f"  {key:<8} {what}" for key, what in self.keys)
        with Vertical(id="dialog"):
            yield Static("gatetui keys", classes="dialog-title")
            yield Static(lines)
            yield Static(
                "Every new commit on a watched branch is gated on a fresh copy the agent never "
                "touched. Verdicts: pass, FAIL, REVIEW (old tests fail: a person decides), ERROR "
                "(the gate could not run), stale (the branch moved on).",
                classes="dialog-note",
            )


class CheckDetailScreen(ModalScreen[None]):
    """One check's whole detail: the table shows its first line, cut to the
    terminal's width."""

    BINDINGS = [Binding("escape,enter,q", "dismiss", "close")]

    def __init__(self, title: str, detail: str):
        super().__init__()
        self.title_text, self.detail = title, detail

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog", classes="detail"):
            yield Static(inert(self.title_text), classes="dialog-title", markup=False)
            yield Static(inert(self.detail) or "(no detail)", markup=False)
            yield Static("escape: close", classes="dialog-note")


class ErrorScreen(ModalScreen[None]):
    """A gate error: the message says what is wrong and what to do. It may
    quote head (a branch name, a file, a test's output): shown as text."""

    BINDINGS = [Binding("escape,enter,q", "dismiss", "close")]

    def __init__(self, title: str, message: str):
        super().__init__()
        self.title_text, self.message = title, message

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="error"):
            yield Static(inert(self.title_text), classes="dialog-title", markup=False)
            yield Static(inert(self.message), markup=False)
            yield Button("OK", variant="error", id="ok")

    def on_button_pressed(self, _: Button.Pressed) -> None:
        self.dismiss()
