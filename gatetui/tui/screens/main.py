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
from gatetui.supervise.runs import Branch, Run
from gatetui.supervise.supervisor import Supervisor
from gatetui.tui.format import VERDICT_WORD, seconds, short
from gatetui.tui.messages import BranchesChanged, EscalationRaised, OutputArrived, RunChanged
from gatetui.tui.widgets.branches import BranchTable, RunsTable
from gatetui.tui.widgets.checks import ChecksTable
from gatetui.tui.widgets.credit import CreditPanel, month_projection
from gatetui.tui.widgets.digests import DigestPanel
from gatetui.tui.widgets.logview import LogView


class MainScreen(Screen[None]):
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

    def __init__(self, supervisor: Supervisor, clock: Callable[[], float]):
        super().__init__()
        self.supervisor, self.clock = supervisor, clock
        self.branch_name: str | None = None
        self.run_id: str | None = None  # None: follow the branch's latest run

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="body"):
            with Vertical(id="left"):
                yield Static("branches", classes="section")
                yield BranchTable(id="branches", cursor_type="row")
                yield Static("runs (enter: show)", classes="section")
                yield RunsTable(id="runs", cursor_type="row")
            with Vertical(id="right"):
                yield Static(id="run-title")
                yield ChecksTable(id="checks", cursor_type="row")
                yield LogView(id="log")
                with Horizontal(id="panels"):
                    yield DigestPanel(id="digests")
                    yield CreditPanel(id="credit")
        yield Static(id="empty")
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

    @property
    def branch(self) -> Branch | None:
        return self.supervisor.branches.get(self.branch_name or "")

    @property
    def run(self) -> Run | None:
        return self.supervisor.run(self.branch_name, self.run_id) if self.branch_name else None

    def refresh_all(self) -> None:
        branches = sorted(self.supervisor.branches.values(), key=lambda b: b.name)
        if self.branch_name not in self.supervisor.branches:
            self.branch_name, self.run_id = (branches[0].name if branches else None), None
        self.query_one(BranchTable).show(branches, self.clock())
        empty = self.query_one("#empty", Static)
        empty.display = not branches
        empty.update(self.empty_text())
        self.query_one("#body").display = bool(branches)
        self.refresh_run()

    def refresh_run(self) -> None:
        branch, run, now = self.branch, self.run, self.clock()
        if run is not None:
            self.supervisor.load_logs(run)  # a run from history: its logs from the store, once
        self.query_one(RunsTable).show(branch, now, run.run_id if run else None)
        checks = self.query_one(ChecksTable)
        checks.show(run, now)
        self.query_one("#run-title", Static).update(self.title_text(branch, run))
        self.query_one(LogView).show(run, checks.selected_check)
        self.query_one(DigestPanel).show(branch, run)
        self.refresh_credit()

    def refresh_credit(self) -> None:
        branch = self.branch
        submits = (self.supervisor.submits_used(branch.name), self.supervisor.submit_cap) if branch else None
        runs = (run for b in self.supervisor.branches.values() for run in b.runs)
        self.query_one(CreditPanel).show(self.run, self.supervisor.cost_since_start(), submits,
                                         month_projection(runs, self.clock()))

    def tick(self) -> None:
        now = self.clock()
        self.query_one(BranchTable).show(sorted(self.supervisor.branches.values(), key=lambda b: b.name), now)
        run = self.run
        if run is not None and run.in_progress:
            self.query_one(ChecksTable).show(run, now)

    def title_text(self, branch: Branch | None, run: Run | None) -> str:
        if branch is None:
            return ""
        escalated = ("\nESCALATED: the agent used its submits; review its runs, then g gives its submits back"
                     if branch.escalated else "")
        if run is None:
            why = "its head is part of base: waiting for the agent's commit" if branch.at_base else "no run yet"
            return f"{branch.name} at {short(branch.head)}: {why}{escalated}"
        word = VERDICT_WORD.get(run.status, run.status)
        stale = "  (stale: not the branch tip)" if run.head != branch.head and not run.in_progress else ""
        if self.run_id is not None:
            stale += "  (an older run: enter on the newest follows it again)"
        took = f" in {seconds(run.seconds)}" if run.seconds is not None else ""
        review = f", review {run.review}" if run.review else ""
        notes = "".join(f"\nnote: {n}" for n in run.notes[:1])
        message = f"\n{run.message}" if run.message else ""
        return (f"{branch.name} at {short(run.head)}: {word}{took}{review}, "
                f"{run.backend or self.supervisor.backend.name} backend{stale}{escalated}{message}{notes}")

    def empty_text(self) -> str:
        s = self.supervisor
        return (f"No branch matches {s.pattern} in {s.repo.name} yet.\n\n"
                f"Have your agent work on a branch named like {s.pattern.replace('*', 'fix-dates')}\n"
                f"  (git switch -c {s.pattern.replace('*', 'fix-dates')} {s.base})\n"
                "and commit: every new commit on it is gated here, live.\n\n"
                "? help   q quit")

    # --- supervisor messages -------------------------------------------------------

    def on_branches_changed(self, _: BranchesChanged) -> None:
        self.refresh_all()

    def on_run_changed(self, message: RunChanged) -> None:
        if message.branch == self.branch_name:
            self.refresh_run()
        else:
            self.refresh_credit()  # the total since start moved

    def on_escalation_raised(self, message: EscalationRaised) -> None:
        """Show the escalated branch and its runs, ready to review."""
        self.show_branch(message.branch)
        self.notify(message.message, title="a person is asked", severity="warning", timeout=30)

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

    # --- the user ----------------------------------------------------------------

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
        if event.row_key.value is not None:
            self.query_one(LogView).show(self.run, CheckId(str(event.row_key.value)))

    def action_rerun(self) -> None:
        if self.branch_name and self.supervisor.gate(self.branch_name) is None:
            self.notify("nothing to gate: the branch's head is part of base", severity="warning")
        self.run_id = None

    def action_cancel(self) -> None:
        if not (self.branch_name and self.supervisor.cancel(self.branch_name)):
            self.notify("no run in progress on this branch")

    def action_review(self) -> None:
        from gatetui.tui.screens.review import ReviewScreen

        run = self.run
        if run is None or run.checks[CheckId.OLD_TESTS].status is not Status.FAIL:
            self.notify("nothing to review: old_tests did not fail in this run")
            return
        self.app.push_screen(ReviewScreen(self.supervisor, run))

    def action_give_back(self) -> None:
        if self.branch_name:
            self.supervisor.give_back_submits(self.branch_name)
            self.notify(f"{self.branch_name} has its {self.supervisor.submit_cap} submits again")

    def action_copy(self) -> None:
        run = self.run
        if run is None or run.in_progress:
            self.notify("no verdict yet to copy")
            return
        block = run.verdict_block()
        self.app.copy_to_clipboard(block)
        store = self.supervisor.store
        saved = store.write_atomic(store.repo_dir(self.supervisor.repo).relative_to(store.root) / "verdicts" /
                                   f"{run.run_id}.txt", (block + "\n").encode())
        # the terminal may ignore the clipboard request (OSC 52), and nothing tells the app: say where else it is
        self.notify(f"verdict block sent to the terminal's clipboard (some terminals ignore it); also in {saved}",
                    timeout=10)
