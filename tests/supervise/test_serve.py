"""The submit server's protocol over a real Unix socket, in-process, on a
real repo and a real clone: requests it refuses, status, the escalation
after the cap (cap 0: no gate needed), where the socket may live; and
`gatetui submit`'s client against it where nothing needs a gate: a refusal
asked before the commit, a refusal after it taken back."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from dulwich.index import Index, IndexEntry

from gatetui.agent import submit
from gatetui.backends.local import LocalBackend
from gatetui.errors import BackendError, BadInput
from gatetui.supervise.events import BranchesChanged, EscalationRaised, SupervisorEvent
from gatetui.supervise.ref_watcher import RefWatcher
from gatetui.supervise.remote import RemoteSupervisor
from gatetui.supervise.serve import SubmitServer, default_socket
from gatetui.supervise.store import Store
from gatetui.supervise.supervisor import Supervisor
from tests.support.repos import MakeRepo, git
from tests.support.submitting import SAME_SIZE, edited_in_the_clones_second, git_out, next_second, untouched
from tests.support.supervising import until

pytestmark = pytest.mark.asyncio

BASE = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1"\n',
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}


async def ask(path: Path, request: dict[str, Any] | bytes) -> list[dict[str, Any]]:
    reader, writer = await asyncio.open_unix_connection(str(path))
    writer.write(request if isinstance(request, bytes) else json.dumps(request).encode() + b"\n")
    await writer.drain()
    replies = [json.loads(line) async for line in reader]
    writer.close()
    return replies


@pytest_asyncio.fixture
async def server(make_repo: MakeRepo, tmp_path: Path) -> AsyncIterator[tuple[SubmitServer, list[SupervisorEvent]]]:
    repo = make_repo(BASE, {"calc.py": "def add(a, b):\n    return b + a\n"})
    sup = Supervisor(
        repo,
        LocalBackend(work_root=tmp_path),
        Store.open(tmp_path / "state"),
        submit_cap=0,
        watcher=RefWatcher(repo, step_ms=20),
    )
    seen: list[SupervisorEvent] = []
    sup.subscribe(seen.append)
    served = SubmitServer(sup, tmp_path / "s.sock")
    await served.start()
    yield served, seen
    await served.close()
    await sup.stop()


async def test_bad_requests_get_one_error_line_each(
    server: tuple[SubmitServer, list[SupervisorEvent]], tmp_path: Path
) -> None:
    served, _ = server
    assert await ask(served.path, b"not json\n") == [
        {"event": "error", "code": 2, "message": "the request is not one line of JSON"}
    ]
    assert await ask(served.path, {"op": "merge"}) == [
        {"event": "error", "code": 2, "message": "unknown request: send op can_submit, submit, status or watch"}
    ]
    assert await ask(served.path, {"op": "submit", "branch": "agent/x", "head": "a" * 40, "repo": "clone"}) == [
        {"event": "error", "code": 2, "message": "the working copy's path must be absolute: clone"}
    ]
    assert await ask(served.path, {"op": "submit", "branch": "agent/x", "head": "HEAD", "repo": "/x"}) == [
        {"event": "error", "code": 2, "message": "not a commit sha: 'HEAD'"}
    ]
    assert await ask(served.path, {"op": "status"}) == [
        {"event": "error", "code": 2, "message": "status needs the branch: run it from your working copy"}
    ]


async def test_status_of_a_branch_without_submits(server: tuple[SubmitServer, list[SupervisorEvent]]) -> None:
    served, _ = server
    assert await ask(served.path, {"op": "status", "branch": "agent/new"}) == [
        {
            "event": "status",
            "branch": "agent/new",
            "submits_used": 0,
            "cap": 0,
            "escalated": False,
            "last": None,
            "running": False,
        }
    ]


async def test_the_submit_after_the_cap_is_not_gated_and_raises_the_escalation(
    server: tuple[SubmitServer, list[SupervisorEvent]], tmp_path: Path
) -> None:
    served, seen = server
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(served.supervisor.repo), str(clone))
    head = git(clone, "rev-parse", "origin/agent/x")
    replies = await ask(served.path, {"op": "submit", "branch": "agent/x", "head": head, "repo": str(clone)})
    assert replies == [
        {
            "event": "escalated",
            "submits_used": 0,
            "cap": 0,
            "message": "not gated: agent/x has used its 0 submits. A person has been asked to review your work; "
            "stop here and wait for them.",
        }
    ]
    escalations = [e for e in seen if isinstance(e, EscalationRaised)]
    assert escalations == [
        EscalationRaised(
            "agent/x",
            f"agent/x used its 0 submits and submitted again (at {head[:7]}): review its last runs and take over",
        )
    ]
    assert served.supervisor.branches["agent/x"].escalated is True
    assert (await ask(served.path, {"op": "status", "branch": "agent/x"}))[0]["escalated"] is True
    assert not served.supervisor.branches["agent/x"].runs  # nothing was gated
    sup = served.supervisor
    assert sup.store.escalated(sup.repo) == {"agent/x"}  # a restarted supervisor still knows
    sup.give_back_submits("agent/x")
    assert sup.branches["agent/x"].escalated is False and isinstance(seen[-1], BranchesChanged)
    assert sup.store.escalated(sup.repo) == set()


async def test_a_commit_is_read_from_the_clone_into_the_private_mirror(
    server: tuple[SubmitServer, list[SupervisorEvent]], tmp_path: Path
) -> None:
    served, _ = server
    sup = served.supervisor
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(sup.repo), str(clone))
    git(clone, "checkout", "-qb", "agent/y")
    (clone / "NOTES.md").write_text("only in the clone\n")
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "notes")
    head = git(clone, "rev-parse", "HEAD")
    before = git(sup.repo, "count-objects", "-v")
    await asyncio.to_thread(sup.submits.fetch, clone, head)
    assert git(sup.mirror, "cat-file", "-p", f"{head}:NOTES.md") == "only in the clone"
    assert git(sup.repo, "count-objects", "-v") == before  # nothing written into the supervised repo
    assert oct(sup.mirror.stat().st_mode & 0o777) == "0o700" and sup.store.root in sup.mirror.parents
    with pytest.raises(BadInput, match="is already part of main: nothing new to judge"):
        await asyncio.to_thread(sup.submits.fetch, clone, git(clone, "rev-parse", "main"))
    with pytest.raises(BadInput, match="cannot read commit 0000000 from the working copy"):
        await asyncio.to_thread(sup.submits.fetch, clone, "0" * 40)


async def test_where_the_socket_may_live(server: tuple[SubmitServer, list[SupervisorEvent]], tmp_path: Path) -> None:
    served, _ = server
    with pytest.raises(BackendError, match="a supervisor already listens on"):
        await SubmitServer(served.supervisor, served.path).start()
    with pytest.raises(BadInput, match="the socket must not be under the state directory"):
        await SubmitServer(served.supervisor, served.supervisor.store.root / "submit.sock").start()
    stale = tmp_path / "stale.sock"
    stale.write_text("")  # left by a crashed supervisor: replaced
    second = SubmitServer(served.supervisor, stale)
    await second.start()
    assert (await ask(stale, {"op": "status", "branch": "agent/x"}))[0]["event"] == "status"
    await second.close()
    assert not stale.exists()
    assert default_socket(served.supervisor.repo) == Path(
        f"/tmp/gatetui-{__import__('gatetui.supervise.store').supervise.store.repo_key(served.supervisor.repo)}/submit.sock"
    )


async def test_a_second_supervisor_leaves_the_first_ones_socket_alone(
    server: tuple[SubmitServer, list[SupervisorEvent]],
) -> None:
    served, _ = server
    second = SubmitServer(served.supervisor, served.path)
    with pytest.raises(BackendError):
        await second.start()
    await second.close()
    assert (await ask(served.path, {"op": "status", "branch": "agent/x"}))[0]["event"] == "status"


async def test_the_cap_comes_from_base_unless_given_and_follows_base(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo({**BASE, "gatetui.toml": "submit_cap = 0\n"}, {"calc.py": "def add(a, b):\n    return b + a\n"})
    sup = Supervisor(
        repo, LocalBackend(work_root=tmp_path), Store.open(tmp_path / "state"), watcher=RefWatcher(repo, step_ms=20)
    )
    served = SubmitServer(sup, tmp_path / "s.sock")
    await served.start()
    try:
        clone = tmp_path / "clone"
        git(tmp_path, "clone", "-q", str(repo), str(clone))
        head = git(clone, "rev-parse", "origin/agent/x")
        replies = await ask(served.path, {"op": "submit", "branch": "agent/x", "head": head, "repo": str(clone)})
        assert [(r["event"], r["cap"]) for r in replies] == [("escalated", 0)]
        git(repo, "checkout", "-q", "main")
        (repo / "gatetui.toml").write_text("submit_cap = 5\n")
        git(repo, "commit", "-qam", "five submits")
        status = await ask(served.path, {"op": "status", "branch": "agent/x"})
        assert status[0]["cap"] == 0  # status answers from what was read, without touching the repo
        assert await asyncio.to_thread(sup.read_cap) == 5  # a submit reads base again first
    finally:
        await served.close()
        await sup.stop()
    given = Supervisor(repo, LocalBackend(work_root=tmp_path), Store.open(tmp_path / "state"), submit_cap=1)
    assert (given.read_cap(), Supervisor(tmp_path / "nowhere", LocalBackend(), given.store).read_cap()) == (1, 3)


def clone_on(served: SubmitServer, tmp_path: Path, name: str, branch: str) -> Path:
    clone = tmp_path / name
    git(tmp_path, "clone", "-q", str(served.supervisor.repo), str(clone))
    git(clone, "checkout", "-qb", branch)
    return clone


def staged_notes(clone: Path) -> Path:
    """A new file staged before the edit (git writing the index after it
    would smudge the edited file's entry itself)."""
    (clone / "notes.txt").write_text("new\n")
    git(clone, "add", "notes.txt")
    return clone


def index_sizes(clone: Path) -> dict[bytes, int]:
    """The size each index entry's stat data holds (0: smudged, git reads the file again)."""
    return {
        name: entry.size
        for name, entry in Index(str(clone / ".git" / "index")).items()
        if isinstance(entry, IndexEntry)
    }


async def test_can_submit_answers_what_a_submit_would_before_the_commit(
    server: tuple[SubmitServer, list[SupervisorEvent]], tmp_path: Path
) -> None:
    served, seen = server
    clone = clone_on(served, tmp_path, "clone", "agent/ask")
    head = git(clone, "rev-parse", "HEAD")
    request = {"op": "can_submit", "repo": str(clone), "branch": "agent/ask", "head": head}
    assert await ask(served.path, {**request, "branch": "feature/x"}) == [
        {
            "event": "error",
            "code": 2,
            "message": "feature/x is not a supervised branch: work on a branch named like agent/fix-dates, then submit",
        }
    ]
    assert await ask(served.path, {**request, "head": "HEAD"}) == [
        {"event": "error", "code": 2, "message": "not a commit sha: 'HEAD'"}
    ]
    served.supervisor.submits.cap.given = 2
    assert await ask(served.path, request) == [
        {"event": "can_submit", "branch": "agent/ask", "submits_used": 0, "cap": 2}
    ]
    assert await ask(served.path, {**request, "head": ""}) == [  # a branch without a commit yet
        {"event": "can_submit", "branch": "agent/ask", "submits_used": 0, "cap": 2}
    ]
    assert not [e for e in seen if isinstance(e, EscalationRaised)] and "agent/ask" not in served.supervisor.branches
    served.supervisor.submits.cap.given = 0  # the cap reached: this is the submit after it
    assert await ask(served.path, request) == [
        {
            "event": "escalated",
            "submits_used": 0,
            "cap": 0,
            "message": "not gated: agent/ask has used its 0 submits. A person has been asked to review your work; "
            "stop here and wait for them.",
        }
    ]
    assert [e for e in seen if isinstance(e, EscalationRaised)] == [
        EscalationRaised(
            "agent/ask",
            f"agent/ask used its 0 submits and submitted again (at {head[:7]}): review its last runs and take over",
        )
    ]


async def test_a_submit_on_a_branch_not_watched_is_refused_before_the_cap(
    server: tuple[SubmitServer, list[SupervisorEvent]], tmp_path: Path
) -> None:
    """The old request alone, cap 0: refused as not watched (2), not escalated."""
    served, seen = server
    clone = clone_on(served, tmp_path, "clone", "feature/old")
    request = {"op": "submit", "repo": str(clone), "branch": "feature/old", "head": git(clone, "rev-parse", "HEAD")}
    assert [(r["event"], r["code"]) for r in await ask(served.path, request)] == [("error", 2)]
    assert not [e for e in seen if isinstance(e, EscalationRaised)]


async def test_the_cap_reached_is_known_before_the_commit_and_nothing_is_written(
    server: tuple[SubmitServer, list[SupervisorEvent]], tmp_path: Path
) -> None:
    served, seen = server  # cap 0
    clone = clone_on(served, tmp_path, "clone", "agent/capped")
    (clone / "calc.py").write_text(SAME_SIZE)
    (clone / "notes.txt").write_text("new\n")
    before = untouched(clone)
    next_second()  # a write would show in the index's mtime
    outcome = await asyncio.to_thread(submit.submit_once, clone, "more", served.path)
    assert outcome == submit.Outcome(
        "not gated: agent/capped has used its 0 submits. A person has been asked to "
        "review your work; stop here and wait for them.",
        4,
    )
    assert untouched(clone) == before
    assert git_out(clone, "status", "--porcelain") == " M calc.py\n?? notes.txt\n"
    assert served.supervisor.branches["agent/capped"].escalated is True
    assert [e.message for e in seen if isinstance(e, EscalationRaised)] == [
        f"agent/capped used its 0 submits and submitted again (at {before[2][:7]}): review its last runs and take over"
    ]


async def test_a_refusal_after_the_commit_takes_it_back_and_git_still_sees_the_edit(
    server: tuple[SubmitServer, list[SupervisorEvent]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race: the last submit is free when asked, taken by another submit
    before this one arrives. The commit is taken back, and the index's
    entry of the file edited within the clone's second is smudged, so git
    sees the edit; the staged file stays staged."""
    served, _ = server
    sup = served.supervisor
    sup.submits.cap.given = 1
    clone = edited_in_the_clones_second(
        lambda name: staged_notes(clone_on(served, tmp_path, name, "agent/race")), "race"
    )
    head, sizes = git(clone, "rev-parse", "HEAD"), index_sizes(clone)
    commit_work = submit.commit_work

    def commit_then_lose_the_race(top: Path, message: str) -> submit.Committed:
        done = commit_work(top, message)
        sup.store.count_submit(sup.repo, "agent/race")  # another submit took the last one meanwhile
        next_second()  # the index written back is newer than the edit: git would trust its stat data
        return done

    monkeypatch.setattr(submit, "commit_work", commit_then_lose_the_race)
    outcome = await asyncio.to_thread(submit.submit_once, clone, "raced", served.path)
    assert (outcome.code, outcome.text.split(".")[0]) == (4, "not gated: agent/race has used its 1 submits")
    assert git(clone, "rev-parse", "HEAD") == head and git(clone, "branch", "--list", "agent/race") == "* agent/race"
    assert index_sizes(clone) == {**sizes, b"calc.py": 0}  # only the edited file's entry is smudged
    assert git_out(clone, "diff").splitlines()[-2:] == ["-    return a + b", "+    return b + a"]
    assert git_out(clone, "status", "--porcelain") == " M calc.py\nA  notes.txt\n"


async def test_a_supervisor_without_can_submit_refuses_after_the_commit_and_it_is_taken_back(
    server: tuple[SubmitServer, list[SupervisorEvent]], tmp_path: Path
) -> None:
    """A supervisor older than `can_submit` answers it as an unknown request:
    the client commits and submits as before, and its refusal takes the
    commit back, the index as git would have it."""
    served, _ = server

    async def unknown(request: dict[str, Any], uid: int, send: Any) -> None:
        raise BadInput("unknown request: send op submit or status")

    served.can_submit = unknown  # type: ignore[method-assign]
    clone = edited_in_the_clones_second(lambda name: clone_on(served, tmp_path, name, "feature/old"), "old")
    head = git(clone, "rev-parse", "HEAD")
    next_second()
    outcome = await asyncio.to_thread(submit.submit_once, clone, "", served.path)
    assert outcome == submit.Outcome(
        "gatetui: feature/old is not a supervised branch: work on a branch named like agent/fix-dates, then submit", 2
    )
    assert git(clone, "rev-parse", "HEAD") == head
    assert git_out(clone, "status", "--porcelain") == " M calc.py\n"


@pytest.mark.install  # the submit is gated for real
@pytest.mark.sandbox
async def test_a_viewer_sees_the_submit_counted_as_soon_as_the_verdict_is_sent(
    server: tuple[SubmitServer, list[SupervisorEvent]], tmp_path: Path
) -> None:
    """The count is stored after the verdict; a viewer's row must show it
    then, not when the branch next moves (nothing else moves here)."""
    served, _ = server
    served.supervisor.submits.cap.given = 2
    remote = RemoteSupervisor(served.path)
    watching = asyncio.create_task(remote.follow())
    try:
        await until(lambda: remote.submit_cap == 2)
        clone = clone_on(served, tmp_path, "clone", "agent/counted")
        git(clone, "reset", "-q", "--hard", "origin/agent/x")  # head's change, never gated here
        head = git(clone, "rev-parse", "HEAD")
        replies = await ask(served.path, {"op": "submit", "branch": "agent/counted", "head": head, "repo": str(clone)})
        assert [(r["event"], r.get("submits_used")) for r in replies] == [("accepted", None), ("verdict", 1)], replies
        await until(lambda: remote.submits_used("agent/counted") == 1)
        assert served.supervisor.submits_used("agent/counted") == 1
    finally:
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)
