"""The main screen: branches and runs on the left; the selected run's checks,
its log, digest state and credit table on the right."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Header, Static
from textual.widgets.data_table import RowDoesNotExist

from gatetui.inert import inert
from gatetui.supervise.supervisor import Supervisor
from gatetui.supervise.view import SupervisorView
from gatetui.tui.follow import Spotlight
from gatetui.tui.messages import BranchesChanged, EscalationRaised, OutputArrived, RunChanged
from gatetui.tui.screens.main_actions import RunActions
from gatetui.tui.screens.main_text import empty_text, run_title
from gatetui.tui.widgets.branches import BranchTable, RunsTable
from gatetui.tui.widgets.checks import ChecksTable
from gatetui.tui.widgets.credit import CreditPanel, month_projection
from gatetui.tui.widgets.digests import DigestPanel
from gatetui.tui.widgets.logview import LogView
from gatetui.tui.widgets.notice import Notices, ScenarioNotice


class MainScreen(RunActions):
    BINDINGS = [
        Binding("r", "rerun", "rerun"),
        Binding("c", "cancel", "cancel"),
        Binding("v", "review", "review"),
        Binding("y", "copy", "copy verdict"),
        Binding("l", "app.lab", "rules lab"),
        Binding("g", "give_back", "give submits back", show=False),
        Binding("p", "panes", "digests/credits", show=False),
    ]
    NARROW = 120  # columns: below, the panes stack (80x24 works)

    def __init__(self, supervisor: SupervisorView, clock: Callable[[], float], control: Supervisor | None = None):
        """`control`: the supervisor the keys act on; None for a viewer, whose keys change nothing."""
        super().__init__()
        self.supervisor, self.clock, self.control = supervisor, clock, control
        self.branch_name: str | None = None
        self.run_id: str | None = None  # None: follow the branch's latest run
        self.spotlight: Spotlight | None = None  # the demo: the pane follows the run gating or just judged
        self.notices = Notices()  # the demo: each scenario's story, shown beside its verdict

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="body"):
            with Vertical(id="left"):
                yield Static("branches", classes="section")
                yield BranchTable(id="branches", cursor_type="row")
                yield Static("runs (enter: show)", classes="section")
                yield RunsTable(id="runs", cursor_type="row")
            with Vertical(id="right"):
                yield Static(id="run-title", markup=False)
                yield ScenarioNotice(id="notice", markup=False)
                yield ChecksTable(id="checks", cursor_type="row")
                yield LogView(id="log")
                with Horizontal(id="panels"):
                    yield DigestPanel(id="digests")
                    yield CreditPanel(id="credit")
        yield Static(id="empty", markup=False)
        yield Footer()

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < self.NARROW, "narrow")

    def action_panes(self) -> None:
        """On a narrow terminal the digest and credit panes are hidden: show them (or not)."""
        self.toggle_class("panes")

    def on_mount(self) -> None:
        self.query_one(DigestPanel).border_title = "Digests: what this verdict judged"
        self.query_one(CreditPanel).border_title = "Credits: at Runtime's rates"
        self.set_interval(1.0, self.tick)
        self.refresh_all()

    # --- what is shown -------------------------------------------------------

    def refresh_all(self) -> None:
        branches = sorted(self.supervisor.branches.values(), key=lambda b: b.name)
        if self.branch_name not in self.supervisor.branches:
            self.branch_name, self.run_id = (branches[0].name if branches else None), None
        self.query_one(BranchTable).show(branches, self.clock())
        empty = self.query_one("#empty", Static)
        empty.display = not branches
        empty.update(inert(empty_text(self.supervisor)))
        self.query_one("#body").display = bool(branches)
        self.refresh_run()

    def refresh_run(self) -> None:
        branch, run, now = self.branch, self.run, self.clock()
        if run is not None:
            self.supervisor.load_logs(run)  # a run from history: its logs from the store, once
        self.query_one(RunsTable).show(branch, now, run.run_id if run else None)
        checks = self.query_one(ChecksTable)
        checks.show(run, now)
        title = run_title(self.supervisor, branch, run, self.run_id is not None)
        self.query_one("#run-title", Static).update(inert(title))  # head's branch name, notes, messages
        self.query_one(ScenarioNotice).show(self.notices.text(self.branch_name, run))
        self.query_one(LogView).show(run, checks.selected_check)
        self.query_one(DigestPanel).show(branch, run)
        self.refresh_credit()

    def refresh_credit(self) -> None:
        branch = self.branch
        submits = (self.supervisor.submits_used(branch.name), self.supervisor.submit_cap) if branch else None
        runs = (run for b in self.supervisor.branches.values() for run in b.runs)
        self.query_one(CreditPanel).show(
            self.run, self.supervisor.cost_since_start(), submits, month_projection(runs, self.clock())
        )

    def tick(self) -> None:
        self.follow()  # a verdict's hold may have run out
        now = self.clock()
        self.query_one(BranchTable).show(sorted(self.supervisor.branches.values(), key=lambda b: b.name), now)
        run = self.run
        if run is not None and run.in_progress:
            self.query_one(ChecksTable).show(run, now)

    # --- supervisor messages -------------------------------------------------------

    def on_branches_changed(self, _: BranchesChanged) -> None:
        if not self.follow():
            self.refresh_all()

    def follow(self) -> bool:
        """In the demo, show the branch the spotlight moved to (a run began
        gating or was judged); True when it moved, the screen redrawn."""
        name = self.spotlight.moved(self.supervisor.branches.values()) if self.spotlight else None
        if name is not None:
            self.show_branch(name)
        return name is not None

    def on_run_changed(self, message: RunChanged) -> None:
        if message.branch == self.branch_name:
            self.refresh_run()
        else:
            self.refresh_credit()  # the total since start moved

    def on_escalation_raised(self, message: EscalationRaised) -> None:
        """Show the escalated branch and its runs, ready to review."""
        self.show_branch(message.branch)
        self.notify(inert(message.message), title="a person is asked", severity="warning", timeout=30, markup=False)

    def show_branch(self, name: str) -> None:
        """Select `name` in the branch list and show its newest run."""
        self.branch_name, self.run_id = name, None
        self.refresh_all()
        table = self.query_one(BranchTable)
        with contextlib.suppress(RowDoesNotExist):
            table.move_cursor(row=table.get_row_index(name))

    def on_output_arrived(self, message: OutputArrived) -> None:
        run = self.run
        checks = self.query_one(ChecksTable)
        if run is not None and message.run_id == run.run_id and message.check is checks.selected_check:
            self.query_one(LogView).show(run, message.check)
