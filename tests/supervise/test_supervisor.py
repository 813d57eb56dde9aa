"""The supervisor over real git repos in tmp_path, with a scripted backend:
history at start, missed heads gated, a newer head cancelling the run in
progress, stale verdicts, records and review decisions kept in the store."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.events import CheckFinished, OutputChunk
from gatetui.supervise.events import BranchesChanged, RunFailed, RunUpdated, SupervisorEvent
from gatetui.supervise.ref_watcher import RefWatcher
from gatetui.supervise.runs import LogBuffer, Run
from gatetui.supervise.store import Store
from gatetui.supervise.supervisor import Supervisor
from tests.support.repos import MakeRepo, git, write_tree
from tests.support.supervising import BASE, HEAD, FakeBackend, FakeWorkspace, until, watching


def commit(repo: Path, branch: str, files: Mapping[str, str], message: str) -> str:
    git(repo, "checkout", "-q", branch)
    write_tree(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    sha = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    return sha


def supervisor(repo: Path, backend: FakeBackend, state: Path) -> tuple[Supervisor, list[SupervisorEvent]]:
    sup = Supervisor(repo, backend, Store.open(state), watcher=RefWatcher(repo, step_ms=20))
    seen: list[SupervisorEvent] = []
    sup.subscribe(seen.append)
    return sup, seen


@pytest.mark.asyncio
async def test_a_head_without_a_run_is_gated_at_start_and_recorded(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo(BASE, HEAD)
    sup, seen = supervisor(repo, FakeBackend(), tmp_path / "state")
    await sup.start()
    branch = sup.branches["agent/x"]
    await until(lambda: branch.latest is not None and not branch.latest.in_progress)
    await sup.stop()
    run = branch.latest
    assert run is not None and run.head == git(repo, "rev-parse", "agent/x")
    assert [r["run_id"] for r in sup.store.runs(repo)] == [run.run_id]
    assert sup.store.runs(repo)[0]["branch"] == "agent/x"
    assert run.seal == sup.store.runs(repo)[0]["seal"]
    assert run.checks[CheckId.NO_NEW_SKIPS].status is Status.PASS
    assert any(isinstance(e, RunUpdated) and isinstance(e.event, OutputChunk) for e in seen)
    assert isinstance(seen[0], BranchesChanged)


@pytest.mark.asyncio
async def test_history_is_loaded_and_a_judged_head_is_not_gated_again(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo(BASE, HEAD)
    first, _ = supervisor(repo, FakeBackend(), tmp_path / "state")
    await first.start()
    await until(lambda: first.branches["agent/x"].status not in ("queued", "running"))
    await first.stop()
    backend = FakeBackend()
    second, _ = supervisor(repo, backend, tmp_path / "state")
    await second.start()  # its start-up scan decides, there and then, which heads to gate
    await watching(second.watcher)  # and the watch caught up: no move since, nothing gated because of one
    # a gate, had one been started, has run to its end (and opened a workspace)
    await until(lambda: not any(r.in_progress for r in second.branches["agent/x"].runs))
    await second.stop()
    runs = second.branches["agent/x"].runs
    assert [r.run_id for r in runs] == [r.run_id for r in first.branches["agent/x"].runs]
    assert runs[0].record is not None and backend.opened == 0
    assert runs[0].status == first.branches["agent/x"].runs[0].status


@pytest.mark.asyncio
async def test_an_escalated_branch_is_still_escalated_after_a_restart(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo(BASE, HEAD)
    first, _ = supervisor(repo, FakeBackend(), tmp_path / "state")
    await first.start()
    first.escalate("agent/x", first.branches["agent/x"].head, "used its 3 submits")
    await first.stop()
    second, _ = supervisor(repo, FakeBackend(), tmp_path / "state")
    await second.start()
    await second.stop()
    assert second.branches["agent/x"].escalated is True


@pytest.mark.asyncio
async def test_a_newer_head_cancels_the_run_in_progress(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo(BASE, HEAD)
    backend = FakeBackend(released=False)
    sup, _ = supervisor(repo, backend, tmp_path / "state")
    await sup.start()
    branch = sup.branches["agent/x"]
    await until(lambda: backend.opened == 1)
    newer = commit(repo, "agent/x", {"README": "more\n"}, "newer")
    await until(lambda: len(branch.runs) == 2)
    old, new = branch.runs
    assert (old.status, new.head, branch.head) == ("cancelled", newer, newer)
    await until(lambda: backend.closed >= 1)  # the cancelled run's workspace was closed
    backend.release.set()
    await until(lambda: not new.in_progress)
    await sup.stop()
    kept = {r["run_id"]: (r["verdict"], r.get("stopped", False)) for r in sup.store.runs(repo)}
    assert kept == {old.run_id: ("cancelled", True), new.run_id: (new.status, False)}  # every run is kept


@pytest.mark.asyncio
async def test_a_finished_verdict_goes_stale_when_the_branch_moves(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo(BASE, HEAD)
    backend = FakeBackend()
    sup, _ = supervisor(repo, backend, tmp_path / "state")
    await sup.start()
    branch = sup.branches["agent/x"]
    await until(lambda: branch.judged is not None)
    backend.release.clear()
    commit(repo, "agent/x", {"README": "more\n"}, "newer")
    await until(lambda: branch.status == "running")
    assert branch.stale is True
    sup.cancel("agent/x")
    assert branch.status == "stale"
    await sup.stop()


@pytest.mark.asyncio
async def test_a_branch_at_base_waits_and_a_new_branch_is_picked_up(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo(BASE, HEAD)
    git(repo, "branch", "agent/idle", "main")
    sup, _ = supervisor(repo, FakeBackend(), tmp_path / "state")
    await sup.start()
    assert sup.branches["agent/idle"].status == "at base"
    assert sup.gate("agent/idle") is None
    git(repo, "branch", "agent/new", "agent/x")
    await until(lambda: "agent/new" in sup.branches and sup.branches["agent/new"].latest is not None)
    git(repo, "branch", "-D", "agent/idle")
    await until(lambda: "agent/idle" not in sup.branches)
    await sup.stop()
    assert sorted(sup.branches) == ["agent/new", "agent/x"]


@pytest.mark.asyncio
async def test_a_backend_error_is_reported_not_raised(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo(BASE, HEAD)
    sup, seen = supervisor(repo, FakeBackend(preflight_error="`npm` does not run: install npm"), tmp_path / "state")
    await sup.start()
    await until(lambda: any(isinstance(e, RunFailed) for e in seen))
    await sup.stop()
    failed = [e for e in seen if isinstance(e, RunFailed)]
    assert [(e.branch, e.message) for e in failed] == [("agent/x", "`npm` does not run: install npm")]
    assert sup.branches["agent/x"].status == "error"


@pytest.mark.asyncio
async def test_a_review_decision_is_kept_sealed(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo(BASE, HEAD)
    sup, _ = supervisor(repo, FakeBackend(), tmp_path / "state")
    await sup.start()
    branch = sup.branches["agent/x"]
    await until(lambda: branch.judged is not None)
    await sup.stop()
    run = branch.judged
    assert run is not None
    sup.review(run, "rejected", by="lead")
    record = sup.store.runs(repo)[0]
    assert record["review"] == {"decision": "rejected", "by": "lead"}
    assert sup.store.verify(sup.store.run_path(repo, run.run_id)).ok is True
    assert Run.from_record(record).review == "rejected"


def test_review_files_name_both_versions(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo(BASE, {"tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2)\n"})
    sup = Supervisor(repo, FakeBackend(), Store.open(tmp_path / "state"))
    run = Run("r", "agent/x", git(repo, "rev-parse", "agent/x"))
    from gatetui.gate.sealing.digests import Digests

    run.digests = Digests(git(repo, "rev-parse", "main"), run.head, sealed_changed=("tests/test_calc.py",))
    [file] = sup.review_files(run)
    assert file.path == "tests/test_calc.py"
    assert file.base is not None and "== 3" in file.base
    assert file.head is not None and "== 3" not in file.head
    assert [op[0] for op in file.opcodes()] == ["equal", "replace"]


def test_review_files_add_the_library_file_a_finding_names(make_repo: MakeRepo, tmp_path: Path) -> None:
    """ "Reaches into the test runner" names calc.py:3: the person sees it beside the sealed tests."""
    reach = "import _pytest.reports\n\ndef add(a, b):\n    return a - b\n"
    repo = make_repo(BASE, {"calc.py": reach, "tests/test_calc.py": BASE["tests/test_calc.py"] + "\n"})
    sup = Supervisor(repo, FakeBackend(), Store.open(tmp_path / "state"))
    run = Run("r", "agent/x", git(repo, "rev-parse", "agent/x"))
    from gatetui.gate.sealing.digests import Digests

    run.digests = Digests(git(repo, "rev-parse", "main"), run.head, sealed_changed=("tests/test_calc.py",))
    run.checks[CheckId.OLD_TESTS].detail = (
        "library code reaches into the test runner: import _pytest.reports "
        "(calc.py:1); tests/test_calc.py::test_add fails under base's tests"
    )
    files = sup.review_files(run)
    assert [f.path for f in files] == ["tests/test_calc.py", "calc.py"]
    assert (files[1].base, files[1].head) == (BASE["calc.py"], reach)


def test_log_buffer_keeps_the_last_lines_and_counts_the_rest() -> None:
    buffer = LogBuffer(cap=3)
    buffer.append("run 1", "a\nb")
    buffer.append("run 1", "c\nd\ne\n")
    assert list(buffer.lines) == ["run 1 | bc", "run 1 | d", "run 1 | e"]  # a partial line waits for its end
    assert (buffer.total, buffer.dropped) == (4, 1)
    assert buffer.since(3) == (["run 1 | e"], False)
    assert buffer.since(0) == (["run 1 | bc", "run 1 | d", "run 1 | e"], True)


def test_a_run_folds_check_results_into_the_verdict_block() -> None:
    run = Run("r", "agent/x", "abc")
    run.apply(CheckFinished(CheckResult(CheckId.INSTALL, Status.FAIL, "no module named x", 1.0)), 0.0)
    run.status = "fail"
    assert run.verdict_block() == "FAIL installs from scratch: no module named x\nverdict: fail"


@pytest.mark.asyncio
async def test_an_errored_run_keeps_no_row_waiting_and_is_shown_after_a_restart(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    repo = make_repo(BASE, HEAD)
    sup, seen = supervisor(repo, FakeBackend(preflight_error="`npm` does not run: install npm"), tmp_path / "state")
    await sup.start()
    await until(lambda: any(isinstance(e, RunFailed) for e in seen))
    await until(lambda: len(sup.store.runs(repo)) == 1)
    await sup.stop()
    run = sup.branches["agent/x"].latest
    assert run is not None and run.status == "error"
    rows = {c: (r.status, r.detail) for c, r in run.checks.items()}
    assert rows[CheckId.INSTALL] == (Status.ERROR, "not judged: the gate stopped (`npm` does not run: install npm)")
    assert all(status.final for status, _ in rows.values())
    again, _ = supervisor(repo, FakeBackend(released=False), tmp_path / "state")
    await again.start()  # the errored head is gated again; the errored run is listed under it
    shown = again.branches["agent/x"].runs
    await again.stop()
    assert [(r.run_id, r.status, r.message) for r in shown[:1]] == [
        (run.run_id, "error", "`npm` does not run: install npm")
    ]
    assert shown[0].checks[CheckId.INSTALL].status is Status.ERROR
    assert len(shown) == 2  # and a new run of the same head


@pytest.mark.asyncio
async def test_a_cancelled_run_is_kept_and_its_head_is_gated_again_after_a_restart(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    repo = make_repo(BASE, HEAD)
    backend = FakeBackend(released=False)
    sup, _ = supervisor(repo, backend, tmp_path / "state")
    await sup.start()
    await until(lambda: backend.opened == 1)
    await sup.stop()  # quitting cancels the run in progress
    run = sup.branches["agent/x"].latest
    assert run is not None and run.status == "cancelled"
    assert run.checks[CheckId.INSTALL].status is Status.RUNNING  # where the cancel found it: shown `cancelled`
    assert [(r["run_id"], r["verdict"]) for r in sup.store.runs(repo)] == [(run.run_id, "cancelled")]
    again, _ = supervisor(repo, FakeBackend(released=False), tmp_path / "state")
    await again.start()
    shown = again.branches["agent/x"].runs
    await again.stop()
    assert [r.status for r in shown] == ["cancelled", "cancelled"]  # kept, and its head gated again (then quit)
    assert shown[0].checks[CheckId.INSTALL].status is Status.RUNNING


def test_a_decided_review_shows_the_decision_in_the_branch_list() -> None:
    from gatetui.supervise.runs import Branch, Run

    run = Run("r1", "agent/x", "h" * 40, status="review")
    branch = Branch("agent/x", "h" * 40, runs=[run])
    assert branch.status == "review"
    run.review = "accepted"
    assert branch.status == "accepted"
    run.review = "rejected"
    assert branch.status == "rejected"


@pytest.mark.asyncio
async def test_a_queued_run_starts_on_the_backend_chosen_meanwhile(make_repo: MakeRepo, tmp_path: Path) -> None:
    """`b` says "next runs": a run still queued when the backend changes is one."""
    repo = make_repo(BASE, HEAD)
    for name in ("agent/y", "agent/z"):
        git(repo, "branch", name, "agent/x")
    first, second = FakeBackend(released=False), FakeBackend(released=False)
    second.name = "second"
    sup, _ = supervisor(repo, first, tmp_path / "state")
    await sup.start()  # three heads, two slots: one run waits
    await until(lambda: sum(b.latest is not None and b.latest.status == "running" for b in sup.branches.values()) == 2)
    queued = [b.latest for b in sup.branches.values() if b.latest is not None and b.latest.status == "queued"]
    assert len(queued) == 1
    sup.set_backend(second)
    first.release.set()
    await until(lambda: second.opened >= 1)
    second.release.set()
    await until(lambda: not queued[0].in_progress)
    await sup.stop()
    others = [b.latest.backend for b in sup.branches.values() if b.latest is not None and b.latest is not queued[0]]
    assert (queued[0].backend, others) == ("second", ["fake", "fake"])


class SlowToCloseWorkspace(FakeWorkspace):
    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            await self.backend.closable.wait()
            self.backend.closed += 1


class SlowToCloseBackend(FakeBackend):
    """Commands wait for `release`, closes for `closable`."""

    def __init__(self) -> None:
        super().__init__(released=False)
        self.closable = asyncio.Event()

    async def open(self, export: Callable[[Path], None], label: str) -> FakeWorkspace:
        self.opened += 1
        return SlowToCloseWorkspace(self)


def open_files_under(folder: Path) -> list[str]:
    """The files under `folder` this process holds open."""
    held = (os.readlink(fd) for fd in Path("/proc/self/fd").iterdir() if fd.is_symlink())
    return sorted(p for p in held if p.startswith(f"{folder}/"))


@pytest.mark.asyncio
async def test_a_run_cancelled_again_and_again_while_it_cleans_up_closes_its_logs_and_is_kept(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    """A TUI's quit cancels a run's worker that a `c` cancelled already: the
    cancel landed where the run waits for its workspaces' closes, which
    re-raise it, and the run's open log files and its record were dropped."""
    repo = make_repo(BASE, HEAD)
    backend = SlowToCloseBackend()
    sup, _ = supervisor(repo, backend, tmp_path / "state")
    await sup.start()
    await until(lambda: backend.opened == 1 and bool(list((tmp_path / "state").rglob("*.log"))))
    task = next(t for t in asyncio.all_tasks() if t.get_name() == "gate agent/x")
    for tick in range(200):  # a cancel at every step of the cleanup, wherever it waits
        if task.done():
            break
        task.cancel()
        if tick == 20:
            backend.closable.set()
        await asyncio.sleep(0)
    await asyncio.wait([task])
    await sup.stop()
    assert open_files_under(tmp_path / "state") == []
    (run,) = sup.branches["agent/x"].runs
    assert (run.status, [(r["run_id"], r["verdict"]) for r in sup.store.runs(repo)]) == (
        "cancelled",
        [(run.run_id, "cancelled")],
    )
