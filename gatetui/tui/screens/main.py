"""The main screen: branches and runs on the left; the selected run's checks,
its log, digest state and credit table on the right."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static
from textual.widgets.data_table import RowDoesNotExist

from gatetui.gate.checks import CheckId, Status
from gatetui.inert import inert, inert_line
from gatetui.supervise.runs import Branch, Run
from gatetui.supervise.supervisor import Supervisor
from gatetui.supervise.view import SupervisorView
from gatetui.tui.follow import Spotlight
from gatetui.tui.messages import BranchesChanged, EscalationRaised, OutputArrived, RunChanged
from gatetui.tui.screens.main_text import empty_text, run_title
from gatetui.tui.widgets.branches import BranchTable, RunsTable
from gatetui.tui.widgets.checks import ChecksTable
from gatetui.tui.widgets.credit import CreditPanel, month_projection
from gatetui.tui.widgets.digests import DigestPanel
from gatetui.tui.widgets.logview import LogView
from gatetui.tui.widgets.notice import Notices, ScenarioNotice


class MainScreen(Screen[None]):
    """The supervisor's runs, and the person's answers to them: moving
    through the tables, and what the keys do to the selected run (rerun,
    cancel, review, give the submits back, copy the verdict). A viewer's
    screen (no `control`) has only the keys that move around."""

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
    CHANGES = frozenset({"rerun", "cancel", "review", "give_back", "lab"})  # what a viewer may not do

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A viewer's footer leaves out the keys that change something, and they do nothing."""
        return self.control is not None or action not in self.CHANGES

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
            self.query_one(LogView).streamed(run, message.check)

    @property
    def branch(self) -> Branch | None:
        return self.supervisor.branches.get(self.branch_name or "")

    @property
    def run(self) -> Run | None:
        return self.supervisor.run(self.branch_name, self.run_id) if self.branch_name else None

    @on(DataTable.RowHighlighted, "#branches")
    def branch_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The user moved to a branch. A table rebuilt by the clock (its
        `when` column) highlights its first row on the way back to the
        selected one: that row is not where the cursor is, and is ignored
        (it used to show the branch's newest run again, once a second)."""
        name = None if event.row_key.value is None else str(event.row_key.value)
        if name != self.query_one(BranchTable).selected_key:
            return
        if name != self.branch_name:
            self.branch_name, self.run_id = name, None
            self.refresh_run()

    @on(DataTable.RowSelected, "#runs")
    def run_selected(self, event: DataTable.RowSelected) -> None:
        branch = self.branch
        key = None if event.row_key.value is None else str(event.row_key.value)
        latest = branch.latest if branch else None
        self.run_id = None if latest is None or key == latest.run_id else key
        self.refresh_run()

    @on(DataTable.RowSelected, "#checks")
    def check_selected(self, event: DataTable.RowSelected) -> None:
        """The whole detail of a check, however narrow the table."""
        from gatetui.tui.screens.dialogs import CheckDetailScreen

        run = self.run
        if run is None or event.row_key.value is None:
            return
        row = run.checks[CheckId(str(event.row_key.value))]
        self.app.push_screen(CheckDetailScreen(f"{row.check.title}: {row.status.value}", row.detail))

    @on(DataTable.RowHighlighted, "#checks")
    def check_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The log follows the cursor; a row highlighted on the way back to
        it (a rebuilt table) is not where the cursor is, and is ignored."""
        if event.row_key.value is not None and event.row_key.value == self.query_one(ChecksTable).selected_key:
            self.query_one(LogView).show(self.run, CheckId(str(event.row_key.value)))

    def action_rerun(self) -> None:
        if self.control and self.branch_name and self.control.gate(self.branch_name) is None:
            self.notify("nothing to gate: the branch's head is part of base", severity="warning")
        self.run_id = None

    def action_cancel(self) -> None:
        if self.control and not (self.branch_name and self.control.cancel(self.branch_name)):
            self.notify("no run in progress on this branch")

    def action_review(self) -> None:
        from gatetui.tui.screens.review import ReviewScreen

        run = self.run
        asks = run is not None and (
            run.checks[CheckId.OLD_TESTS].status is Status.FAIL
            or any(run.checks[c].status is Status.REVIEW for c in (CheckId.COVERED, CheckId.BITES))
        )
        if run is None or not asks:
            self.notify("nothing to review: old_tests did not fail, and covered and bites found nothing")
            return
        if self.control:
            self.app.push_screen(ReviewScreen(self.control, run))

    def action_give_back(self) -> None:
        if self.control and self.branch_name:
            self.control.give_back_submits(self.branch_name)
            self.notify(f"{inert_line(self.branch_name)} has its {self.control.submit_cap} submits again", markup=False)

    def action_copy(self) -> None:
        run = self.run
        if run is None or run.in_progress:
            self.notify("no verdict yet to copy")
            return
        block = inert(run.verdict_block())  # pasted into a terminal or a chat: escaped as on screen
        self.app.copy_to_clipboard(block)
        if self.control is None:  # a viewer writes nothing into the supervisor's state
            self.notify("verdict block sent to the terminal's clipboard (some terminals ignore it)", timeout=10)
            return
        store = self.control.store
        saved = store.write_atomic(
            store.repo_dir(self.control.repo).relative_to(store.root) / "verdicts" / f"{run.run_id}.txt",
            (block + "\n").encode(),
        )
        # the terminal may ignore the clipboard request (OSC 52), and nothing tells the app: say where else it is
        self.notify(
            f"verdict block sent to the terminal's clipboard (some terminals ignore it); also in "
            f"{inert_line(str(saved))}",
            timeout=10,
            markup=False,
        )
