"""The run's checks as rows that change live: status, elapsed time, one-line detail."""

from __future__ import annotations

from gatetui.gate.checks import CheckId, Status
from gatetui.supervise.runs import Run
from gatetui.tui.format import STATUS_WORD, one_line, seconds
from gatetui.tui.widgets.tables import KeyedTable, status_text


class ChecksTable(KeyedTable):
    COLUMNS = (("status", "status"), ("check", "check"), ("time", "time"), ("detail", "detail"))

    def show(self, run: Run | None, now: float) -> None:
        rows = {}
        for check, row in run.checks.items() if run else ():
            status = STATUS_WORD[row.status]
            if run is not None and run.status == "cancelled" and not row.status.final:
                status = "cancelled"
            elif check is CheckId.OLD_TESTS and row.status is Status.FAIL and run and run.status == "review":
                status = "REVIEW"
            rows[check.value] = (
                status_text(status),
                check.title,
                seconds(row.elapsed(now)) if (run and (row.status.final or run.in_progress)) else "",
                one_line(row.detail),
            )
        self.sync(rows)

    @property
    def selected_check(self) -> CheckId:
        key = self.selected_key
        return CheckId(key) if key else CheckId.INSTALL
