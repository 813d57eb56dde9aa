"""What the person does on the main screen: moving through the tables, and
what the keys do to the selected run (rerun, cancel, review, give the
submits back, copy the verdict). Apart from the layout and the supervisor's
messages, which stay in main.py."""

from __future__ import annotations

from textual import on
from textual.screen import Screen
from textual.widgets import DataTable

from gatetui.gate.checks import CheckId, Status
from gatetui.inert import inert, inert_line
from gatetui.supervise.runs import Branch, Run
from gatetui.supervise.supervisor import Supervisor
from gatetui.supervise.view import SupervisorView
from gatetui.tui.widgets.branches import BranchTable
from gatetui.tui.widgets.logview import LogView


class RunActions(Screen[None]):
    """The main screen's answers to the person; it sets what they act on.
    A viewer's screen (no `control`) has only the keys that move around."""

    supervisor: SupervisorView
    control: Supervisor | None
    branch_name: str | None
    run_id: str | None
    CHANGES = frozenset({"rerun", "cancel", "review", "give_back", "lab"})  # what a viewer may not do

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A viewer's footer leaves out the keys that change something, and they do nothing."""
        return self.control is not None or action not in self.CHANGES

    @property
    def branch(self) -> Branch | None:
        return self.supervisor.branches.get(self.branch_name or "")

    @property
    def run(self) -> Run | None:
        return self.supervisor.run(self.branch_name, self.run_id) if self.branch_name else None

    def refresh_run(self) -> None:
        """Show the selected run again (the screen draws it)."""
        raise NotImplementedError

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
