"""The watch stream over a real Unix socket, in-process, on a real repo with
a scripted backend: a viewer ends up holding what the supervisor holds; a
watch connection changes nothing whatever it sends; only the supervisor's
own user may watch; a viewer that falls behind is dropped with a notice
while another keeps every line; runs cross the wire whole."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import socket
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from gatetui.cli.main import main
from gatetui.errors import BackendError
from gatetui.gate.checks import CheckId, Status
from gatetui.gate.cost import Cost, Usage
from gatetui.gate.events import CheckStarted, OutputChunk
from gatetui.gate.sealing.digests import Digests, RuleDigest
from gatetui.supervise import broadcast
from gatetui.supervise.events import BranchesChanged, RunUpdated
from gatetui.supervise.ref_watcher import RefWatcher
from gatetui.supervise.remote import Ended, RemoteSupervisor
from gatetui.supervise.runs import CheckRow, Run
from gatetui.supervise.serve import SubmitServer
from gatetui.supervise.store import Store
from gatetui.supervise.supervisor import Supervisor
from gatetui.supervise.wire import run_from_wire, run_to_wire
from tests.support.as_user import run_as
from tests.support.repos import MakeRepo
from tests.support.submitting import AGENT_UID
from tests.support.supervising import BASE, HEAD, FakeBackend, until


@dataclass
class Served:
    sup: Supervisor
    server: SubmitServer
    backend: FakeBackend
    repo: Path
    said: list[str]

    @property
    def run(self) -> Run:
        run = self.sup.run("agent/x")
        assert run is not None
        return run


@pytest_asyncio.fixture
async def served(make_repo: MakeRepo, tmp_path: Path) -> AsyncIterator[Served]:
    """A supervisor gating agent/x (its commands held until released), a
    submit cap of 0 (a can_submit would escalate), its socket open to all."""
    repo = make_repo(BASE, HEAD)
    backend = FakeBackend(released=False)
    sup = Supervisor(repo, backend, Store.open(tmp_path / "state"), submit_cap=0, watcher=RefWatcher(repo, step_ms=20))
    folder = Path(tempfile.mkdtemp(prefix="gatetui-view-", dir="/tmp"))
    folder.chmod(0o711)  # another uid may pass, as to the default socket's folder
    said: list[str] = []
    server = SubmitServer(sup, folder / "s.sock", log=said.append)
    await server.start()
    await sup.start()
    served = Served(sup, server, backend, repo, said)
    await until(lambda: sup.run("agent/x") is not None and served.run.checks[CheckId.INSTALL].status is Status.RUNNING)
    try:
        yield served
    finally:
        await server.close()
        await sup.stop()
        folder.rmdir()


def same_run(seen: Run, held: Run) -> None:
    """The viewer's run is the supervisor's: every field, every kept line."""
    assert dataclasses.replace(seen, logs={}, record=None) == dataclasses.replace(held, logs={}, record=None)
    assert {c: list(b.lines) for c, b in seen.logs.items()} == {c: list(b.lines) for c, b in held.logs.items()}
    assert (seen.record or {}).get("baseline") == (held.record or {}).get("baseline")


@pytest.mark.asyncio
async def test_a_viewer_holds_what_the_supervisor_holds_from_snapshot_to_verdict(served: Served) -> None:
    remote = RemoteSupervisor(served.server.path)
    watching = asyncio.create_task(remote.follow())
    await until(lambda: remote.run("agent/x") is not None)
    snapshot = remote.run("agent/x")
    assert snapshot is not None and snapshot.checks[CheckId.INSTALL].status is Status.RUNNING
    assert (remote.repo, remote.base, remote.pattern, remote.backend.name) == (served.repo, "main", "agent/*", "fake")
    served.backend.release.set()
    await until(lambda: not served.run.in_progress)
    held = served.run
    await until(lambda: (remote.run("agent/x") or snapshot).seal == held.seal != "")
    seen = remote.run("agent/x")
    assert seen is not None and seen.status == held.status and not held.in_progress
    same_run(seen, held)
    assert remote.branches.keys() == served.sup.branches.keys() == {"agent/x"}
    assert remote.branches["agent/x"].head == served.sup.branches["agent/x"].head
    assert (remote.cost_since_start(), remote.submit_cap) == (served.sup.cost_since_start(), 0)
    await served.server.close()  # the supervisor goes: the viewer's stream ends, its screen keeps what it had
    assert await watching == Ended(False, "the supervisor stopped: what is shown is as it last was")


@pytest.mark.asyncio
async def test_a_watch_connection_changes_nothing_whatever_it_sends(served: Served) -> None:
    reader, writer = await asyncio.open_unix_connection(str(served.server.path))
    try:
        writer.write(b'{"op": "watch"}\n')
        submit = {"op": "submit", "branch": "agent/x", "head": served.run.head, "repo": str(served.repo)}
        for request in (submit, {"op": "can_submit", "branch": "agent/x", "head": "", "repo": str(served.repo)}):
            writer.write(json.dumps(request).encode() + b"\n")
            await writer.drain()
        refused = []
        while len(refused) < 1:
            line = json.loads(await reader.readline())
            refused += [line] if line["event"] == "refused" else []
    finally:
        writer.close()
        await writer.wait_closed()
    assert refused[0] == {
        "event": "refused",
        "message": "a watch connection is read-only: nothing it sends is acted on",
    }
    branch = served.sup.branches["agent/x"]
    assert (len(branch.runs), branch.escalated, served.sup.submits_used("agent/x")) == (1, False, 0)
    assert served.run.status == "running"  # the cap is 0: a can_submit acted on would have escalated


@pytest.mark.asyncio
@pytest.mark.skipif(os.geteuid() != 0, reason="watching as another user needs root (CI runs as root)")
async def test_only_the_supervisors_own_user_may_watch(served: Served) -> None:
    """The agent's user may reach the socket to submit; a watch would hand
    it the hidden tests' output and head's logs: refused, nothing sent."""
    assert served.server.path.stat().st_mode & 0o777 == 0o666
    watch = (
        "s = socket.socket(socket.AF_UNIX)\n"
        f"s.connect({str(served.server.path)!r})\n"
        's.sendall(b\'{"op": "watch"}\\n\')\n'
        "print(s.makefile().read(), end='')\n"
        "s.close()\n"
    )
    done = await asyncio.to_thread(run_as, AGENT_UID, watch, imports=["socket"])
    assert [json.loads(line) for line in done.stdout.splitlines()] == [
        {
            "event": "error",
            "code": 2,
            "message": "only the supervisor's own user may watch: what a viewer sees includes the hidden tests' "
            "output and the logs a person reviews",
        }
    ]


@pytest.mark.asyncio
async def test_a_viewer_that_falls_behind_is_dropped_while_another_keeps_every_line(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    served.server.viewers.size = 16
    monkeypatch.setattr(
        broadcast, "NOTICE_WAIT", 120.0
    )  # the notice waits for the slow reader however loaded the machine
    keeping = RemoteSupervisor(served.server.path)
    watching = asyncio.create_task(keeping.follow())
    slow = socket.socket(socket.AF_UNIX)  # asks, then reads nothing until it is dropped
    slow.connect(str(served.server.path))
    slow.sendall(b'{"op": "watch"}\n')
    await until(lambda: len(served.server.viewers.writers) == 2 and keeping.run("agent/x") is not None)
    block = "".join(f"line {i:05} of a test that talks a lot\n" for i in range(2000))
    kept = served.run.log(CheckId.INSTALL)
    for _ in range(200):  # 16 MB: far more than the socket's buffers hold
        served.sup.apply(served.run, OutputChunk(CheckId.INSTALL, "install", block))
        # the reading viewer keeps up (it is paced so, however loaded the machine); the other never reads
        await until(lambda: (keeping.run("agent/x") or served.run).log(CheckId.INSTALL).total == kept.total)
    await until(lambda: served.said == ["a viewer fell 16 events behind: dropped"])
    with slow, slow.makefile("rb") as stream:  # it reads at last: the stream ends with the notice
        lines = [json.loads(line) for line in await asyncio.to_thread(stream.readlines)]
    assert lines[-1] == {
        "event": "dropped",
        "message": "this viewer fell 16 events behind the supervisor and was dropped: open it again",
    }
    seen = keeping.run("agent/x")
    assert seen is not None and list(seen.log(CheckId.INSTALL).lines) == list(kept.lines)
    assert len(served.server.viewers.writers) == 1  # the dropped one is forgotten
    watching.cancel()


def test_a_burst_leaves_as_one_line_per_check_and_stream_and_one_per_runs_state() -> None:
    def out(check: CheckId, stream: str, text: str, run_id: str = "r1") -> RunUpdated:
        return RunUpdated("agent/x", run_id, OutputChunk(check, stream, text))

    started = CheckStarted(CheckId.RUNS)
    burst = [
        out(CheckId.INSTALL, "install", "a\n"),
        out(CheckId.INSTALL, "install", "b\n"),
        out(CheckId.RUNS, "run 1", "c\n"),
        out(CheckId.RUNS, "run 2", "d\n"),
        out(CheckId.RUNS, "run 2", "e"),
        out(CheckId.RUNS, "run 2", "f\n", run_id="r2"),
        RunUpdated("agent/x", "r1", started),
        RunUpdated("agent/x", "r1"),
        BranchesChanged(),
        BranchesChanged(),
        out(CheckId.INSTALL, "install", "g\n"),
    ]
    assert broadcast.coalesce(burst) == [
        out(CheckId.INSTALL, "install", "a\nb\n"),
        out(CheckId.RUNS, "run 1", "c\n"),
        out(CheckId.RUNS, "run 2", "d\ne"),
        out(CheckId.RUNS, "run 2", "f\n", run_id="r2"),
        RunUpdated("agent/x", "r1"),  # the run's state, read when it is sent: once
        BranchesChanged(),
        out(CheckId.INSTALL, "install", "g\n"),  # after other news: its own line, in order
    ]


@pytest.mark.asyncio
async def test_no_supervisor_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(BackendError) as caught:
        await RemoteSupervisor(tmp_path / "none.sock").follow()
    assert str(caught.value) == (
        f"no supervisor answers on {tmp_path / 'none.sock'} (No such file or directory): start `gatetui serve REPO` "
        "or the TUI on the repository, or pass its --socket"
    )


def test_a_run_crosses_the_wire_whole() -> None:
    """Every field a screen reads, unrounded: cost figures the store's record rounds included."""
    rule = RuleDigest("tests", "review", True, "b" * 64, "c" * 64, ("tests/a.py",), ("tests/new.py",))
    run = Run(
        "r1",
        "agent/x",
        "a" * 40,
        "review",
        base="d" * 40,
        backend="local",
        started_at=1000.123456789,
        finished_at=1010.5,
        seconds=10.377,
        digests=Digests("d" * 40, "a" * 40, "e", "f", ("tests/a.py",), "m", ("pyproject.toml",), rules=(rule,)),
        cost=Cost({"install": Usage(1.0, 0.123456789, 2.5e-9)}, account={"dollars": 0.5}, saved={"runs": Usage(2)}),
        notes=("log hiding is not enforced",),
        message="",
        seal="s" * 64,
        review="accepted",
        record={"baseline": {"rule": "strict"}, "checks": []},
    )
    run.checks[CheckId.RUNS] = CheckRow(CheckId.RUNS, Status.FAIL, "1 of 3 runs failed", 1001.25, 3.5)
    run.log(CheckId.RUNS).append("run 1", "one\ntwo\n")
    back = run_from_wire(json.loads(json.dumps(run_to_wire(run, logs=True))))
    assert dataclasses.replace(back, logs={}) == dataclasses.replace(
        run, logs={}, record={"baseline": {"rule": "strict"}}
    )
    assert (list(back.logs[CheckId.RUNS].lines), back.logs[CheckId.RUNS].total) == (["run 1 | one", "run 1 | two"], 2)


def test_web_beyond_loopback_without_a_token_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["web", str(tmp_path), "--host", "0.0.0.0"]) == 2
    assert capsys.readouterr().err == (
        "gatetui: --host 0.0.0.0 serves the room beyond this machine: pass --token T, shared with the room\n"
    )


def test_web_without_a_supervisor_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["web", str(tmp_path), "--socket", str(tmp_path / "none.sock")]) == 3
    assert capsys.readouterr().err == (
        f"gatetui: no supervisor answers on {tmp_path / 'none.sock'} (No such file or directory): start "
        "`gatetui serve REPO` or the TUI on the repository, or pass its --socket\n"
    )


def test_view_without_a_terminal_points_to_the_web_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", str(tmp_path)]) == 2
    assert capsys.readouterr().err == "gatetui: the viewer needs a terminal: `gatetui web` serves it as a web page\n"


@pytest.mark.asyncio
async def test_a_viewer_showing_a_run_from_the_history_gets_its_stored_logs(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    """A restarted supervisor holds its history without logs (read from the
    store when someone looks): a viewer asks for them once, as its screen
    shows the run, and holds what the supervisor's own screen would read."""
    repo = make_repo(BASE, HEAD)
    first = Supervisor(repo, FakeBackend(), Store.open(tmp_path / "state"), watcher=RefWatcher(repo, step_ms=20))
    await first.start()
    await until(lambda: first.branches["agent/x"].status not in ("queued", "running"))
    await first.stop()
    [judged] = [run.run_id for run in first.branches["agent/x"].runs]
    sup = Supervisor(repo, FakeBackend(), Store.open(tmp_path / "state"), watcher=RefWatcher(repo, step_ms=20))
    folder = Path(tempfile.mkdtemp(prefix="gatetui-view-", dir="/tmp"))
    server = SubmitServer(sup, folder / "s.sock")
    await server.start()
    await sup.start()
    remote = RemoteSupervisor(server.path)
    watching = asyncio.create_task(remote.follow())
    try:
        await until(lambda: judged in remote.runs)
        shown = remote.runs[judged]
        assert (shown.logs, shown.in_progress) == ({}, False)
        remote.load_logs(shown)
        remote.load_logs(shown)  # the screen redraws before they come: asked once
        await until(lambda: bool(remote.runs[judged].logs))
        [held] = [run for run in sup.branches["agent/x"].runs if run.run_id == judged]
        sup.load_logs(held)
        fetched = remote.runs[judged]
        assert remote.asked == {judged}
        assert {c: list(b.lines) for c, b in fetched.logs.items()} == {c: list(b.lines) for c, b in held.logs.items()}
        assert "ran " in "".join(line for b in fetched.logs.values() for line in b.lines)
    finally:
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)
        await server.close()
        await sup.stop()
        folder.rmdir()


@pytest.mark.asyncio
@pytest.mark.skipif(os.geteuid() != 0, reason="asking as another user needs root (CI runs as root)")
async def test_only_the_supervisors_own_user_may_read_a_runs_logs(served: Served) -> None:
    """The logs op hands out what a watch would: the agent's user is refused."""
    ask = (
        "s = socket.socket(socket.AF_UNIX)\n"
        f"s.connect({str(served.server.path)!r})\n"
        f"s.sendall(json.dumps({{'op': 'logs', 'branch': 'agent/x', 'run_id': {served.run.run_id!r}}}).encode() + b'\\n')\n"
        "print(s.makefile().read(), end='')\n"
        "s.close()\n"
    )
    done = await asyncio.to_thread(run_as, AGENT_UID, ask, imports=["socket", "json"])
    assert [json.loads(line)["message"] for line in done.stdout.splitlines()] == [
        "only the supervisor's own user may watch: what a viewer sees includes the hidden tests' "
        "output and the logs a person reviews"
    ]
