"""The review screen: each changed sealed file (and each library file a
finding names), base and head side by side; a changed line no test runs,
or a mutant no test killed, is noted under head's line.

Shown when the verdict asks a person: `old_tests` failed, or `covered` or
`bites` found something. Accept or reject is recorded, sealed, in the run's
history.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from gatetui.gate.checks import CheckId, Status
from gatetui.inert import inert, inert_line
from gatetui.supervise.reviews import NAMED_FILE
from gatetui.supervise.runs import ReviewFile, Run
from gatetui.supervise.supervisor import Supervisor
from gatetui.tui.format import one_line, short

REMOVED, ADDED = "on #5f1f1f", "on #1f4f1f"
NOTE = "bold #ffd75f"
ASKS = {CheckId.COVERED: "changed code no test runs", CheckId.BITES: "mutants no test kills"}


def side_by_side(file: ReviewFile) -> tuple[Text, Text]:
    """Both versions aligned line by line, changed lines highlighted, each
    note under head's line it is about (an empty row beside it at base)."""
    a, b = (file.base or "").splitlines(), (file.head or "").splitlines()
    left, right = Text(), Text()
    for tag, i1, i2, j1, j2 in file.opcodes():
        rows = max(i2 - i1, j2 - j1)
        for k in range(rows):
            _line(left, a, i1 + k if i1 + k < i2 else None, "" if tag == "equal" else REMOVED)
            _line(right, b, j1 + k if j1 + k < j2 else None, "" if tag == "equal" else ADDED)
            for note in file.notes.get(j1 + k + 1, ()) if j1 + k < j2 else ():
                left.append("\n")
                right.append(f"     ^ {inert_line(note)}\n", style=NOTE)
    return left, right


def _line(out: Text, lines: list[str], index: int | None, style: str) -> None:
    if index is None:
        out.append("\n")
        return
    out.append(f"{index + 1:>4} ", style="dim")
    out.append(f"{inert(lines[index])}\n", style=style)  # head's code: a line of text, whatever it holds


def reasons_of(detail: str) -> list[str]:
    """The parts of `old_tests`' detail a person decides on: the failing
    base tests and the findings naming a file (shown below, with the sealed
    files); "sealed files changed" is what the file list itself shows."""
    reasons = []
    for part in detail.split("; "):
        if "under base's tests" in part:
            reasons.append(f"failing base test: {part}")
        elif NAMED_FILE.search(part):
            reasons.append(f"finding: {part}")
    return reasons or [f"failing base test: {detail.split(';', 1)[0]}"]


class ReviewScreen(Screen[None]):
    BINDINGS = [
        Binding("a", "decide('accepted')", "accept"),
        Binding("x", "decide('rejected')", "reject"),
        Binding("escape", "app.pop_screen", "back"),
    ]

    def __init__(self, supervisor: Supervisor, run: Run):
        super().__init__()
        self.supervisor, self.run = supervisor, run

    def compose(self) -> ComposeResult:
        run = self.run
        yield Header()
        yield Static(inert(self.heading()), id="review-head", markup=False)  # details quote head: no markup
        with VerticalScroll(id="review-files"):
            for file in self.supervisor.review_files(run):
                left, right = side_by_side(file)
                yield Static(inert_line(file.path), classes="file-name", markup=False)
                with Horizontal(classes="pair"):
                    yield Static(self._label("base", run.base, file.base) + left, classes="side base")
                    yield Static(self._label("head", run.head, file.head) + right, classes="side head")
        yield Footer()

    def heading(self) -> str:
        run = self.run
        lines, asks = [], []
        if run.checks[CheckId.OLD_TESTS].status is Status.FAIL:
            lines, asks = reasons_of(run.checks[CheckId.OLD_TESTS].detail), ["old tests fail on new code"]
        for check, what in ASKS.items():
            if run.checks[check].status is Status.REVIEW:
                lines.append(f"{check}: {one_line(run.checks[check].detail, 10_000)}")
                asks.append(what)
        reasons = "".join(f"{line}\n" for line in lines)
        decision = f"decided: {run.review}" if run.review else "undecided: a accept, x reject"
        return f"review {run.branch} at {short(run.head)}: {'; '.join(asks)}\n{reasons}{decision}"

    @staticmethod
    def _label(side: str, sha: str, text: str | None) -> Text:
        state = "" if text is not None else ("  (absent at base)" if side == "base" else "  (deleted at head)")
        return Text(f"{side} {short(sha)}{state}\n", style="bold")

    def action_decide(self, decision: str) -> None:
        self.supervisor.review(self.run, decision)
        self.query_one("#review-head", Static).update(inert(self.heading()))
        self.notify(f"run {decision}: recorded in the history")
