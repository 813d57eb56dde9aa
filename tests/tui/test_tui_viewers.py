"""Two `gatetui view` screens beside the supervisor's own, driven by Pilot
in one process: a real repo, a real agent commit on the watched branch, a
scripted backend holding the gate until released. The viewers show the
same branch rows and check statuses as the supervisor's screen as the run
goes; their keys that would change something do nothing, and what the
server received from them (recorded by a relay between them and the
socket) is one watch request each."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from gatetui.supervise.ref_watcher import RefWatcher
from gatetui.supervise.remote import RemoteSupervisor
from gatetui.supervise.serve import SubmitServer
from gatetui.supervise.store import Store
from gatetui.supervise.supervisor import Supervisor
from gatetui.tui.app import GatetuiApp
from gatetui.tui.viewer import ViewerApp
from tests.support.repos import MakeRepo, git
from tests.support.supervising import BASE, SKIPPED, FakeBackend
from tests.support.tui import SIZE, cell, column, wait_for

pytestmark = pytest.mark.drives  # each drives the Textual app

CHANGES = ("r", "c", "v", "g", "l", "b")  # rerun, cancel, review, give back, lab, backend: the supervisor's own keys


@contextlib.asynccontextmanager
async def relay(to: Path, at: Path, heard: list[bytes]) -> AsyncIterator[None]:
    """A socket at `at` that passes everything on to `to` and back, and
    keeps in `heard` what each client sent (one entry per connection)."""

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, keep: int | None) -> None:
        while data := await reader.read(1 << 16):
            if keep is not None:
                heard[keep] += data
            writer.write(data)
            await writer.drain()
        writer.close()

    async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_unix_connection(str(to), limit=1 << 26)
        heard.append(b"")
        with contextlib.suppress(ConnectionError):
            await asyncio.gather(pipe(reader, up_writer, len(heard) - 1), pipe(up_reader, writer, None))

    server = await asyncio.start_unix_server(connected, str(at))
    try:
        yield
    finally:
        server.close()
        at.unlink()


def shown(pilot: object) -> tuple[dict[str, str], dict[str, str]]:
    """The branch list's verdicts and the checks' statuses, as on screen."""
    return column(pilot, "#branches", "verdict"), column(pilot, "#checks", "status")  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_two_viewers_see_what_the_supervisors_screen_shows_and_change_nothing(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    repo = make_repo(BASE, SKIPPED)
    skipped = git(repo, "rev-parse", "agent/x")
    git(repo, "branch", "-f", "agent/x", "main")  # the agent has not committed yet
    backend = FakeBackend(released=False)
    sup = Supervisor(repo, backend, Store.open(tmp_path / "state"), watcher=RefWatcher(repo, step_ms=20))
    folder = Path(tempfile.mkdtemp(prefix="gatetui-view-", dir="/tmp"))
    own = GatetuiApp(sup, submit_server=SubmitServer(sup, folder / "s.sock"))
    heard: list[bytes] = []
    viewers = [ViewerApp(RemoteSupervisor(folder / "relay.sock")) for _ in range(2)]
    async with own.run_test(size=SIZE) as mine, relay(folder / "s.sock", folder / "relay.sock", heard):
        await wait_for(mine, lambda: cell(mine, "#branches", "agent/x", "verdict") == "at base")
        async with viewers[0].run_test(size=SIZE) as one, viewers[1].run_test(size=SIZE) as two:
            for pilot in (one, two):
                await wait_for(pilot, lambda p=pilot: shown(p) == shown(mine))
            git(repo, "update-ref", "refs/heads/agent/x", skipped)  # the agent's commit
            await wait_for(mine, lambda: cell(mine, "#checks", "install", "status") == "running")
            await wait_for(mine, lambda: cell(mine, "#checks", "no_new_skips", "status") == "FAIL")
            during = shown(mine)
            for pilot in (one, two):  # the diff's answer, the install still running: as the supervisor shows it
                await wait_for(pilot, lambda p=pilot: shown(p) == during)
            for pilot in (one, two):
                await pilot.press(*CHANGES)
            backend.release.set()
            await wait_for(mine, lambda: sup.run("agent/x") is not None and not sup.run("agent/x").in_progress)
            await wait_for(mine, lambda: cell(mine, "#branches", "agent/x", "verdict") not in ("running", "queued"))
            after = shown(mine)
            for pilot in (one, two):
                await wait_for(pilot, lambda p=pilot: shown(p) == after)
                footer = {b.binding.key for b in pilot.app.active_bindings.values() if b.binding.show}
                assert footer == {"y", "question_mark", "q"}
                await pilot.press("q")
        await mine.press("q")
    shutil.rmtree(folder)
    run = sup.run("agent/x")
    assert run is not None and len(sup.branches["agent/x"].runs) == 1  # no rerun, nothing cancelled
    assert after == (  # the scripted backend writes no reports: the install errs, the diff's FAIL stands
        {"agent/x": "FAIL"},
        {
            "install": "ERROR",
            "runs": "skip",
            "tests_kept": "pass",
            "no_new_skips": "FAIL",
            "old_tests": "skip",
            "hidden": "skip",
            "covered": "skip",
            "bites": "skip",
        },
    )
    assert heard == [b'{"op": "watch"}\n', b'{"op": "watch"}\n']
