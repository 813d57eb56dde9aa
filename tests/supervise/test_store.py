"""The state directory: private, atomic, sealed, and the history a restart shows."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from gatetui.gate.checks import CheckId, CheckResult, Status, Verdict
from gatetui.gate.cost import Cost
from gatetui.gate.events import OutputChunk, RunFinished, RunStarted
from gatetui.gate.sealing.digests import Digests
from gatetui.supervise.history import Recorder
from gatetui.supervise.store import LOG_CAP, CappedLog, Store, StoreError, seal_of


def _record(run_id: str = "r1") -> dict:
    return {"run_id": run_id, "verdict": "pass", "checks": [{"id": "install", "status": "pass"}]}


def test_open_creates_a_private_directory(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "deep" / "state")
    assert stat.S_IMODE(store.root.stat().st_mode) == 0o700


def test_open_makes_an_own_loose_directory_private_again(tmp_path: Path) -> None:
    loose = tmp_path / "state"
    loose.mkdir(mode=0o755)
    loose.chmod(0o755)
    Store.open(loose)
    assert stat.S_IMODE(loose.stat().st_mode) == 0o700


def test_open_refuses_a_file(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("x")
    with pytest.raises(StoreError, match="is not a directory"):
        Store.open(tmp_path / "state")


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another uid needs root")
def test_open_refuses_a_directory_of_another_user(tmp_path: Path) -> None:
    theirs = tmp_path / "state"
    theirs.mkdir()
    os.chown(theirs, 4242, 4242)
    with pytest.raises(StoreError, match="belongs to uid 4242"):
        Store.open(theirs)


def test_default_follows_xdg_state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert Store.open().root == tmp_path / "xdg" / "gatetui"


def test_write_atomic_leaves_no_temporary_files(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s")
    target = store.write_atomic("a/b.json", b"{}")
    store.write_atomic("a/b.json", b"[1]")
    assert target.read_bytes() == b"[1]"
    assert sorted(p.name for p in target.parent.iterdir()) == ["b.json"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_the_key_is_made_once_and_kept_private(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s")
    key = store.key()
    assert len(key) == 32 and store.key() == key
    assert stat.S_IMODE((store.root / "key").stat().st_mode) == 0o600


def test_saved_runs_verify_and_an_edit_is_detected(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s")
    path = store.save_run(tmp_path / "repo", _record())
    assert store.verify(path).ok is True
    record = json.loads(path.read_text())
    record["verdict"] = "fail"
    path.write_text(json.dumps(record))
    check = store.verify(path)
    assert (check.ok, "altered" in check.reason) == (False, True)


def test_seal_ignores_key_order_but_not_values() -> None:
    key = b"k" * 32
    assert seal_of(key, {"a": 1, "b": 2}) == seal_of(key, {"b": 2, "a": 1})
    assert seal_of(key, {"a": 1}) != seal_of(key, {"a": 2})
    assert seal_of(b"x" * 32, {"a": 1}) != seal_of(key, {"a": 1})


def test_runs_come_back_oldest_first_after_a_restart(tmp_path: Path) -> None:
    Store.open(tmp_path / "s").save_run(tmp_path / "repo", {**_record("b"), "finished_at": 2.0})
    Store.open(tmp_path / "s").save_run(tmp_path / "repo", {**_record("a"), "finished_at": 1.0})
    again = Store.open(tmp_path / "s")
    assert [r["run_id"] for r in again.runs(tmp_path / "repo")] == ["a", "b"]
    assert again.runs(tmp_path / "other") == []


def test_a_review_decision_is_kept_and_resealed(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s")
    store.save_run(tmp_path / "repo", _record())
    store.set_review(tmp_path / "repo", "r1", "accepted", by="ana")
    path = store.run_path(tmp_path / "repo", "r1")
    assert json.loads(path.read_text())["review"] == {"decision": "accepted", "by": "ana"}
    assert store.verify(path).ok is True


def test_submits_are_counted_per_branch(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s")
    assert [store.count_submit("r", "agent/a") for _ in range(3)] == [1, 2, 3]
    assert (store.submits_used("r", "agent/a"), store.submits_used("r", "agent/b")) == (3, 0)
    store.reset_submits("r", "agent/a")
    assert store.submits_used("r", "agent/a") == 0


def test_capped_log_keeps_the_cap_and_counts_the_rest(tmp_path: Path) -> None:
    log = CappedLog(tmp_path / "x.log", cap=10)
    log.write("0123456")
    log.write("789abcdef")
    log.close()
    assert log.dropped == 6
    assert (tmp_path / "x.log").read_text() == "0123456789\n[gatetui: 6 more bytes not kept]\n"
    assert LOG_CAP >= 1 << 20


def test_recorder_keeps_logs_and_a_sealed_record(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s")
    recorder = Recorder(store, branch="agent/x")
    started = RunStarted(
        "run-9", str(tmp_path / "repo"), "main", "agent/x", "a" * 40, "b" * 40, "local", "python", (CheckId.INSTALL,)
    )
    result = CheckResult(CheckId.INSTALL, Status.PASS, "fresh", 1.5)
    for event in (
        started,
        OutputChunk(CheckId.INSTALL, "install", "$ pip install\n"),
        OutputChunk(CheckId.INSTALL, "install", "done\n"),
        RunFinished(Verdict.PASS, (result,), Digests("a" * 40, "b" * 40), Cost(), 2.0),
    ):
        recorder(event)
    assert recorder.path == store.run_path(started.repo, "run-9")
    assert store.verify(recorder.path).ok is True
    assert recorder.record["branch"] == "agent/x"
    assert recorder.record["checks"][0]["detail"] == "fresh"
    log = store.log_path(started.repo, "run-9", "install")
    assert log.read_text() == "$ pip install\ndone\n"


def test_escalated_branches_are_kept_until_given_back(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s")
    store.set_escalated("r", "agent/a", True)
    store.set_escalated("r", "agent/b", True)
    again = Store.open(tmp_path / "s")
    assert again.escalated("r") == {"agent/a", "agent/b"}
    again.set_escalated("r", "agent/a", False)
    assert (again.escalated("r"), again.escalated("other")) == ({"agent/b"}, set())


def test_opening_a_state_directory_open_to_others_makes_it_private_and_says_so(tmp_path: Path) -> None:
    root = tmp_path / "state"
    root.mkdir(mode=0o755)
    root.chmod(0o755)
    store = Store.open(root)
    assert root.stat().st_mode & 0o777 == 0o700
    assert store.note == (
        f"the state directory {root} was open to others (mode 755): made it 700; hidden tests "
        "kept there may have been read, so consider replacing them"
    )
    assert Store.open(root).note == ""
