"""The submit server: the supervisor's Unix socket, and `gatetui serve`.

The agent asks for a verdict through a Unix socket; the verdicts, logs and
keys stay in the 0700 state directory, which the socket is never under. By
default the socket is `/tmp/gatetui-KEY/submit.sock` (KEY a digest of the
supervised repo's real path, so the agent's `gatetui submit` finds it from
the repo it cloned), in a folder 0711 (others may pass, not list) and itself
0666, or 0660 with `group` for an agent user in that group.

The protocol is JSON lines: the client sends one request, the server answers
with one or more events and closes. Its strings are data, head's text
unchanged in them: the client makes them inert where it shows them; so does
`gatetui serve`'s own log, one line per event.

    {"op": "can_submit", "repo": "/abs/working/copy", "branch": "agent/x", "head": SHA or ""}
      -> {"event": "can_submit", "branch", "submits_used", "cap"}
       | {"event": "escalated", "message", "submits_used", "cap"}
       | {"event": "error", "code", "message"}
      (asked before the client commits, so a refusal known up front leaves
      its working copy untouched: a branch not supervised is an error, the
      cap reached is the submit after it, escalated. head is HEAD before
      the commit, "" on a branch without one; the submit follows on
      another connection. `submit` alone still works as before.)
    {"op": "submit", "repo": "/abs/working/copy", "branch": "agent/x", "head": SHA}
      -> {"event": "accepted", "branch", "head", "submit", "cap"}
      -> {"event": "verdict", "verdict", "lines": [...], "submits_used", "cap"}
       | {"event": "unchanged", "verdict", "head", "lines", "submits_used", "cap"}  (head was judged last:
         its verdict again, not counted)
       | {"event": "escalated", "message", "submits_used", "cap"}
       | {"event": "error", "code", "message"}
    {"op": "status", "branch": "agent/x"}
      -> {"event": "status", "branch", "submits_used", "cap", "escalated", "last"}

What the agent hears is what it needs to act: check titles and one-line details, the
verdict, the submits left. Never the logs, hidden tests' names, or the state directory's
paths (nor a watch, nor a stored run's logs: broadcast.py, the supervisor's own user only). The submit after the cap is not gated: it answers that
a person has been asked, and the supervisor raises the escalation. No Textual here.
"""

from __future__ import annotations

import asyncio
import contextlib
import grp
import json
import os
import signal
import socket
import stat
import struct
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from gatetui.errors import BackendError, BadInput, ExitCode, GateError
from gatetui.gate.events import RunFinished
from gatetui.inert import inert_line
from gatetui.supervise.broadcast import Viewers
from gatetui.supervise.events import EscalationRaised, RunFailed, RunUpdated, SupervisorEvent
from gatetui.supervise.runs import Run
from gatetui.supervise.store import repo_key
from gatetui.supervise.supervisor import Supervisor

SOCKET_ROOT = Path("/tmp")
SOCKET_NAME = "submit.sock"
REQUEST_LIMIT = 64 << 10
VERDICTS = ("pass", "fail", "review")

Send = Callable[[dict[str, Any]], Awaitable[None]]


def default_socket(repo: str | Path) -> Path:
    """Where the supervisor of `repo` listens, unless told otherwise."""
    return SOCKET_ROOT / f"gatetui-{repo_key(repo)}" / SOCKET_NAME


class SubmitServer:
    """Answers `can_submit`, `submit`, `status` and `watch` (a viewer's read-only stream: broadcast.py)."""

    def __init__(
        self,
        supervisor: Supervisor,
        path: Path | None = None,
        *,
        group: str | None = None,
        log: Callable[[str], None] | None = None,
    ):
        self.supervisor = supervisor
        self.path = Path(path) if path else default_socket(supervisor.repo)
        self.group, self.log = group, log or (lambda line: None)
        self._server: asyncio.AbstractServer | None = None
        self._made_folder = False
        self._locks: dict[str, asyncio.Lock] = {}
        self.viewers = Viewers(supervisor, lambda line: self.log(line))

    @property
    def cap(self) -> int:
        return self.supervisor.submit_cap

    # --- lifecycle -------------------------------------------------------------

    async def start(self) -> None:
        self._prepare()
        self._server = await asyncio.start_unix_server(self._handle, str(self.path), limit=REQUEST_LIMIT)
        if self.group is None:
            os.chmod(self.path, 0o666)
        else:
            os.chown(self.path, -1, _gid(self.group))
            os.chmod(self.path, 0o660)

    async def close(self) -> None:
        """Stop listening and remove the socket (only one this server made)."""
        if self._server is None:
            return
        self._server.close()
        self._server = None
        await self.viewers.close()  # each viewer hears the supervisor went
        self.path.unlink(missing_ok=True)
        if self._made_folder:
            with contextlib.suppress(OSError):
                self.path.parent.rmdir()

    def _prepare(self) -> None:
        root = self.supervisor.store.root.resolve()
        folder = self.path.parent.resolve()
        if folder == root or root in folder.parents:
            raise BadInput(
                f"the socket must not be under the state directory {root}: the agent's user "
                "could not reach it there (pass another --socket)"
            )
        if not folder.exists():
            folder.mkdir(mode=0o711)
            folder.chmod(0o711)  # past the umask: others may pass through, not list
            self._made_folder = True
        info = folder.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            raise BadInput(f"{folder} is not a folder of yours: someone else made it; remove it or pass --socket")
        if self.path.exists() or self.path.is_symlink():
            if _answers(self.path):
                raise BackendError(f"a supervisor already listens on {self.path}: stop it, or pass --socket")
            self.path.unlink()

    # --- one connection -----------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async def send(reply: dict[str, Any]) -> None:
            writer.write(json.dumps(reply).encode() + b"\n")
            await writer.drain()

        try:
            request = _parse(await reader.readline())
            uid = _peer_uid(writer)
            if request.get("op") == "status":
                await send(self.status(str(request.get("branch", ""))))
            elif request.get("op") == "submit":
                await self.submit(request, uid, send)
            elif request.get("op") == "can_submit":
                await self.can_submit(request, uid, send)
            elif request.get("op") in ("watch", "logs"):
                await self.viewers.serve(request, reader, writer, uid)
            else:
                raise BadInput("unknown request: send op can_submit, submit, status or watch")
        except GateError as err:
            with contextlib.suppress(ConnectionError):
                await send({"event": "error", "code": int(err.exit_code), "message": self.scrub(str(err))})
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away; a run it started still finishes and counts
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    # --- submit and status ------------------------------------------------------------

    async def can_submit(self, request: dict[str, Any], uid: int, send: Send) -> None:
        """Whether a submit on the branch would be taken now, answered the
        way the submit itself would refuse: the client asks before it
        commits. The cap reached is that submit: escalated."""
        branch, head, _ = _submit_fields(request, uid, committed=False)
        sup = self.supervisor
        sup.submits.check_branch(branch)
        async with self._locks.setdefault(branch, asyncio.Lock()):
            used = await asyncio.to_thread(sup.store.submits_used, sup.repo, branch)
            await asyncio.to_thread(sup.read_cap)
            if used >= self.cap:
                await self._escalate(branch, head, used, send)
                return
            await send({"event": "can_submit", "branch": branch, "submits_used": used, "cap": self.cap})

    async def submit(self, request: dict[str, Any], uid: int, send: Send) -> None:
        branch, head, source = _submit_fields(request, uid)
        sup = self.supervisor
        sup.submits.check_branch(branch)  # before the cap: a branch not watched is refused, not escalated
        async with self._locks.setdefault(branch, asyncio.Lock()):
            used = await asyncio.to_thread(sup.store.submits_used, sup.repo, branch)
            await asyncio.to_thread(sup.read_cap)  # base's submit_cap, should base have moved
            judged = sup.branches[branch].judged if branch in sup.branches else None
            if judged is not None and judged.head == head and judged.status in VERDICTS:
                self.log(
                    f"submit on {branch} at {head[:7]}: nothing new since the last submit "
                    f"({judged.status}); not counted"
                )
                await send(
                    {
                        "event": "unchanged",
                        "verdict": judged.status,
                        "head": head,
                        "lines": self.lines(judged),
                        "submits_used": used,
                        "cap": self.cap,
                    }
                )
                return
            if used >= self.cap:
                await self._escalate(branch, head, used, send)
                return
            run = await sup.gate_commit(branch, head, source, as_uid=_reader_uid(uid))
            await send({"event": "accepted", "branch": branch, "head": head, "submit": used + 1, "cap": self.cap})
            self.log(f"submit {used + 1} of {self.cap} on {branch} at {head[:7]}: gating")
            run = await sup.finished(run)
            if run.status not in VERDICTS:
                raise BackendError(_no_verdict(run, self.scrub))
            used = await sup.count_submit(branch)
            await send(
                {
                    "event": "verdict",
                    "verdict": run.status,
                    "lines": self.lines(run),
                    "submits_used": used,
                    "cap": self.cap,
                }
            )

    async def _escalate(self, branch: str, head: str, used: int, send: Send) -> None:
        at = f" (at {head[:7]})" if head else ""
        self.supervisor.escalate(
            branch,
            head,
            f"{branch} used its {self.cap} submits and submitted again{at}: review its last runs and take over",
        )
        await send(
            {
                "event": "escalated",
                "submits_used": used,
                "cap": self.cap,
                "message": (
                    f"not gated: {branch} has used its {self.cap} submits. A person has been asked to review "
                    "your work; stop here and wait for them."
                ),
            }
        )

    def status(self, branch: str) -> dict[str, Any]:
        return _status(self.supervisor, branch, self.cap, self.lines)

    def lines(self, run: Run) -> list[str]:
        """One line per check, what the agent may hear: titles and details."""
        return [self.scrub(r.line()) for r in run.results()]

    def scrub(self, text: str) -> str:
        """No path of the state directory (nor the mirror in it) reaches the agent."""
        for path in {str(self.supervisor.store.root), str(self.supervisor.store.root.resolve())}:
            text = text.replace(path, "<state>")
        return text


def _status(sup: Supervisor, branch: str, cap: int, lines: Callable[[Run], list[str]]) -> dict[str, Any]:
    """What `status` answers: the branch's submits, and its last verdict."""
    if not branch:
        raise BadInput("status needs the branch: run it from your working copy")
    found = sup.branches.get(branch)
    judged = found.judged if found else None
    last = None if judged is None else {"verdict": judged.status, "head": judged.head, "lines": lines(judged)}
    return {
        "event": "status",
        "branch": branch,
        "submits_used": sup.submits_used(branch),
        "cap": cap,
        "escalated": bool(found and found.escalated),
        "last": last,
        "running": bool(found and found.latest and found.latest.in_progress),
    }


def _no_verdict(run: Run, scrub: Callable[[str], str]) -> str:
    if run.status == "cancelled":
        return "the run was cancelled (a newer commit on the branch, or a person): submit again"
    return f"the gate could not run, not your change's fault ({scrub(run.message) or 'see the supervisor'})"


def _parse(line: bytes) -> dict[str, Any]:
    try:
        request = json.loads(line)
    except ValueError:
        raise BadInput("the request is not one line of JSON") from None
    if not isinstance(request, dict):
        raise BadInput("the request is not a JSON object")
    return request


def _submit_fields(request: dict[str, Any], uid: int, committed: bool = True) -> tuple[str, str, Path]:
    """The branch, head and working copy a request names, checked; with
    `committed` False (asked before the commit) head may be "": no commit yet."""
    branch, head, repo = (request.get(k) for k in ("branch", "head", "repo"))
    if not (isinstance(branch, str) and branch and isinstance(head, str) and isinstance(repo, str)):
        raise BadInput("a submit names branch, head and repo")
    if (committed or head) and (len(head) != 40 or any(c not in "0123456789abcdef" for c in head)):
        raise BadInput(f"not a commit sha: {head!r}")
    source = Path(repo)
    if not source.is_absolute():
        raise BadInput(f"the working copy's path must be absolute: {repo}")
    if uid not in (0, os.geteuid()):  # another user: only a repo of its own, read with its rights
        if os.geteuid() != 0:
            raise BadInput(
                "this supervisor cannot read another user's working copy with that user's rights: "
                "run `gatetui serve` as root, or submit as the user who runs it"
            )
        with contextlib.suppress(OSError):
            if source.stat().st_uid == uid:
                return branch, head, source
        raise BadInput(f"{repo} is not your working copy (it must belong to the user who submits)")
    return branch, head, source


def _reader_uid(uid: int) -> int | None:
    """Whose rights read the submitted objects: the submitter's, when it is
    not the supervisor's own user (root reads nothing on an agent's behalf)."""
    return None if uid in (0, os.geteuid()) else uid


def _peer_uid(writer: asyncio.StreamWriter) -> int:
    sock = writer.get_extra_info("socket")
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return os.geteuid()
    data = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", data)[1])


def _answers(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def _gid(group: str) -> int:
    try:
        return grp.getgrnam(group).gr_gid
    except KeyError:
        raise BadInput(f"no such group: {group} (create it and add the agent's user to it)") from None


# --- gatetui serve -----------------------------------------------------------------


def run_serve(supervisor: Supervisor, server: SubmitServer, out: Any = None) -> int:
    """The supervisor without a UI: watches, gates, answers submits until
    interrupted (Ctrl-C or SIGTERM)."""
    supervisor.check()
    return asyncio.run(_serve(supervisor, server, out or sys.stderr))


async def _serve(supervisor: Supervisor, server: SubmitServer, out: Any) -> int:
    def say(line: str) -> None:
        """One event, one line: branch names and messages are head's, shown inert."""
        print(f"gatetui serve: {inert_line(line)}", file=out, flush=True)

    server.log = say
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    supervisor.subscribe(lambda event: _tell(event, say))
    await server.start()  # before any run: a socket already in use stops here
    try:
        await supervisor.start()
        say(
            f"gating {supervisor.pattern} of {supervisor.repo} against {supervisor.base}, "
            f"{supervisor.backend.name} backend; submit socket {server.path}, cap {server.cap} per branch"
        )
        await stop.wait()
    finally:
        await server.close()
        await supervisor.stop()
        say("stopped; runs in progress were cancelled and cleaned up")
    return int(ExitCode.PASS)


def _tell(event: SupervisorEvent, say: Callable[[str], None]) -> None:
    match event:
        case RunUpdated(event=RunFinished() as finished):
            say(f"{event.branch} at {finished.digests.head[:7]}: {finished.verdict.value}")
        case RunFailed():
            say(f"{event.branch}: the gate could not run: {event.message}")
        case EscalationRaised():
            say(f"ESCALATED {event.branch}: {event.message}")
