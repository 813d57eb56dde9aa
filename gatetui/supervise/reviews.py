"""What a person reads and decides after a run, and what is kept of it.

A review run asks a person to compare base's and head's versions of what
changed, with what `covered` and `bites` found beside head's lines (`files`) and decide (`decide`, sealed into the run's record). Runs
read back from the store get their logs on demand (`load_logs`), and a run
that stopped without a verdict is kept all the same (`keep_stopped`).
"""

from __future__ import annotations

import contextlib
import re

from gatetui.gate.checks import CheckId, Status
from gatetui.gate.judging.code_notes import code_notes
from gatetui.git.repo import GitRepo
from gatetui.supervise.events import RunFailed, RunUpdated
from gatetui.supervise.run_states import RunState
from gatetui.supervise.runs import ReviewFile, Run
from gatetui.supervise.scope import Scope

NAMED_FILE = re.compile(r"\(([^()\s:]+):\d+\)")  # a finding's "(path:line)" in a check's detail
STREAM_CHECK = {"install": CheckId.INSTALL, "base install": CheckId.INSTALL, "old tests": CheckId.OLD_TESTS}


class Reviews:
    def __init__(self, scope: Scope):
        self.scope = scope

    def decide(self, run: Run, decision: str, by: str = "") -> None:
        """Record a person's decision (accepted / rejected) on a review run."""
        record = self.scope.store.set_review(self.scope.repo, run.run_id, decision, by)
        run.review, run.record, run.seal = decision, record, str(record.get("seal", ""))
        self.scope.emit(RunUpdated(run.branch, run.run_id))

    def files(self, run: Run) -> list[ReviewFile]:
        """Each file `covered` and `bites` found something in, with their
        notes beside head's lines, when they ask for review; each sealed
        file head changed and each file a finding of `old_tests` names
        (library code reaching into the runner) when it failed: base's and
        head's version, what the person deciding has to read."""
        if run.digests is None:
            return []
        notes = code_notes(
            {c: run.checks[c].detail for c in (CheckId.COVERED, CheckId.BITES) if run.checks[c].status is Status.REVIEW}
        )
        paths = dict.fromkeys(notes)
        if run.checks[CheckId.OLD_TESTS].status is Status.FAIL or not notes:
            paths.update(dict.fromkeys(p.split("#", 1)[0] for p in run.digests.sealed_changed))  # FILE#SECTION
            paths.update(dict.fromkeys(NAMED_FILE.findall(run.checks[CheckId.OLD_TESTS].detail)))
        mirror = self.scope.mirror
        with GitRepo.open(mirror if mirror.exists() else self.scope.repo) as git:
            return [
                ReviewFile(
                    path,
                    _text(git.read(run.digests.base, path)),
                    _text(git.read(run.digests.head, path)),
                    {line: tuple(n) for line, n in notes.get(path, {}).items()},
                )
                for path in paths
            ]

    def load_logs(self, run: Run) -> None:
        """Fill a stored run's logs from the store (once)."""
        if run.logs or run.in_progress:
            return
        folder = self.scope.store.log_path(self.scope.repo, run.run_id, "x").parent
        for path in sorted(folder.glob("*.log")) if folder.is_dir() else ():
            stream = path.stem.replace("-", " ")
            check = STREAM_CHECK.get(stream, CheckId.BITES if stream.startswith("mutant ") else CheckId.RUNS)
            with contextlib.suppress(OSError):
                run.log(check).append(stream, path.read_text(errors="replace") + "\n")

    def keep_stopped(self, run: Run) -> None:
        """A run that ended without a verdict: its rows say why, and its
        record is kept (unsealed verdicts are never read as ones)."""
        run.stop(RunState(run.status), run.message, self.scope.clock())
        try:
            self.scope.store.save_run(self.scope.repo, run.stopped_record(str(self.scope.repo)))
        except OSError as err:
            self.scope.emit(RunFailed(run.branch, run.run_id, f"could not keep the run's record: {err}"))


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", errors="replace")
