"""`gatetui submit`: the agent's finish tool, run in its working copy.

Commits the work to the current branch, hands the commit to the supervisor
through its socket (see serve.py), waits, and prints the verdict the
article's way, one line per check. Exit 0 pass, 1 fail or review, 3 no
supervisor (or the gate could not run), 4 the cap is reached. The MCP
server (mcp_server.py) calls the same `submit_once` and `status_once`.

The socket is found from the supervised repo's path: the working copy's
`origin` when it is a local path (a clone), the main repository of a
worktree, or the working copy itself; `--socket` or $GATETUI_SOCKET
override. No Textual here.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from dulwich import porcelain
from dulwich.errors import NotGitRepository
from dulwich.objects import ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo

from gatetui.errors import BadInput, ExitCode
from gatetui.supervise.serve import default_socket

DEFAULT_MESSAGE = "gatetui submit"
# What the agent hears when no supervisor answers: nothing was submitted and a
# person must act. Not how to start one or to gate without the cap: the person
# reads that in the README ("Let the agent submit").
TELL_THE_PERSON = "nothing was submitted or committed; stop and tell the person who supervises your work"


@dataclass(frozen=True)
class Outcome:
    """What the agent is told: `text` (stdout), `note` (stderr), the exit code."""

    text: str
    code: int
    note: str = ""


class NoSupervisor(BadInput):
    exit_code = ExitCode.GATE_ERROR


# --- the working copy ---------------------------------------------------------------


def working_copy(path: Path) -> Path:
    """The top-level folder of the git working copy holding `path`."""
    here = path.resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    raise BadInput(f"not inside a git working copy: {here} (run submit in your clone, or pass --repo)")


def current_branch(top: Path) -> str:
    try:
        return porcelain.active_branch(str(top)).decode()
    except (ValueError, IndexError, KeyError):
        raise BadInput("HEAD is detached: switch to your branch (git switch agent/NAME), then submit") from None


@dataclass(frozen=True)
class Committed:
    """What `commit_work` did, and what `undo` needs to take it back: the
    index and the branch's ref as they were (ref None: an unborn branch)."""

    branch: str
    head: str
    committed: bool
    index_before: bytes | None = None
    ref_before: bytes | None = None


def commit_work(top: Path, message: str) -> Committed:
    """Stage everything (new, changed and deleted files, minus ignored ones)
    and commit it on the current branch."""
    branch = current_branch(top)
    ref = Ref(b"refs/heads/" + branch.encode())
    with Repo(str(top)) as repo:
        index = Path(repo.index_path())
        index_before = index.read_bytes() if index.exists() else None
        ref_before = repo.refs[ref] if ref in repo.refs else None
    porcelain.add(str(top))
    staged = porcelain.status(str(top), untracked_files="no").staged
    committed = any(staged.values())
    if committed:
        porcelain.commit(str(top), message=(message or DEFAULT_MESSAGE).encode())
    with Repo(str(top)) as repo:
        return Committed(branch, repo.head().decode(), committed, index_before, ref_before)


def undo(top: Path, done: Committed) -> None:
    """Put the working copy back as `commit_work` found it: a refused submit
    leaves no commit on the branch and the index as it was (the files on
    disk were never touched)."""
    with Repo(str(top)) as repo:
        ref = Ref(b"refs/heads/" + done.branch.encode())
        if done.committed:
            if done.ref_before is None:
                repo.refs.remove_if_equals(ref, ObjectID(done.head.encode()))
            else:
                repo.refs.set_if_equals(ref, ObjectID(done.head.encode()), ObjectID(done.ref_before))
        index = Path(repo.index_path())
        if done.index_before is None:
            index.unlink(missing_ok=True)
        else:
            temp = index.with_name(f"{index.name}.gatetui-undo")
            temp.write_bytes(done.index_before)
            os.replace(temp, index)


def supervised_candidates(top: Path) -> list[Path]:
    """Where the supervised repository may be: origin (a local clone's
    source), a worktree's main repository, the working copy itself."""
    found: list[Path] = []
    try:
        with Repo(str(top)) as repo:
            url = _origin_url(repo)
            if url:
                parsed = urlparse(url)
                if parsed.scheme in ("", "file") and not (parsed.scheme == "" and ":" in url.split("/")[0]):
                    found.append((top / (parsed.path if parsed.scheme else url)).resolve())
            common = Path(repo.commondir()).resolve()
            found.append(common.parent if common.name == ".git" else common)
    except NotGitRepository:
        pass
    found.append(top)
    return list(dict.fromkeys(p.resolve() for p in found))


def _origin_url(repo: Repo) -> str:
    try:
        return repo.get_config().get((b"remote", b"origin"), b"url").decode()
    except KeyError:
        return ""


def find_socket(top: Path, given: Path | None = None) -> Path:
    """The supervisor's socket, or NoSupervisor saying how to start one."""
    given = given or (Path(os.environ["GATETUI_SOCKET"]) if os.environ.get("GATETUI_SOCKET") else None)
    if given is not None:
        if given.exists():
            return given
        raise NoSupervisor(f"no supervisor is listening on {given}: {TELL_THE_PERSON}")
    candidates = supervised_candidates(top)
    for repo in candidates:
        path = default_socket(repo)
        if path.exists():
            return path
    repo = candidates[0]
    raise NoSupervisor(f"no supervisor is running for {repo}: {TELL_THE_PERSON}")


# --- talking to the supervisor ------------------------------------------------------------


def ask(path: Path, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Send one request; yield the supervisor's events until it closes."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        try:
            conn.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError):
            raise NoSupervisor(f"no supervisor answers on {path} (it stopped): {TELL_THE_PERSON}") from None
        conn.sendall(json.dumps(request).encode() + b"\n")
        with conn.makefile("rb") as replies:
            for line in replies:
                yield json.loads(line)


def submit_once(repo: Path, message: str = "", socket_path: Path | None = None,
                progress: Any = None) -> Outcome:
    """Commit the work, have the supervisor gate it, and say the verdict.
    A submit the supervisor does not take (a branch it does not watch, the
    cap reached, no answer) takes the commit back."""
    top = working_copy(repo)
    path = find_socket(top, socket_path)
    done = commit_work(top, message)
    replies = _Replies(done.branch, done.head, progress)
    try:
        outcome = replies.hear(ask(path, {"op": "submit", "repo": str(top), "branch": done.branch,
                                          "head": done.head}))
    finally:
        if not replies.accepted:
            undo(top, done)
    return outcome


@dataclass
class _Replies:
    """The supervisor's answers to one submit, read into what the agent hears."""

    branch: str
    head: str
    progress: Any
    accepted: bool = False

    def hear(self, replies: Iterator[dict[str, Any]]) -> Outcome:
        for reply in replies:
            event = reply.get("event")
            if event == "accepted":
                self.accepted = True
                if self.progress is not None:
                    print(f"gatetui: submit {reply['submit']} of {reply['cap']} for {self.branch} at "
                          f"{self.head[:7]}: the supervisor is gating it...", file=self.progress, flush=True)
            elif event in ("verdict", "unchanged"):
                self.accepted = event == "verdict"
                return self._verdict(reply)
            elif event == "escalated":
                return Outcome(str(reply["message"]), int(ExitCode.CAP_REACHED))
            elif event == "error":
                return Outcome(f"gatetui: {reply['message']}", int(reply.get("code", ExitCode.GATE_ERROR)))
        return Outcome("gatetui: the supervisor closed the connection without a verdict: submit again",
                       int(ExitCode.GATE_ERROR))

    def _verdict(self, reply: dict[str, Any]) -> Outcome:
        code = ExitCode.PASS if reply["verdict"] == "pass" else ExitCode.FAIL
        left = reply["cap"] - reply["submits_used"]
        note = (f"{reply['submits_used']} of {reply['cap']} submits used on {self.branch}; "
                + (f"{left} left" if left > 0 else "the next submit goes to a person"))
        if reply["event"] == "unchanged":
            note = (f"nothing new since your last submit ({reply['head'][:7]}: {reply['verdict']}); "
                    f"this one was not counted. {note}")
        return Outcome("\n".join([*reply["lines"], f"verdict: {reply['verdict']}"]), int(code), note)


def status_once(repo: Path, socket_path: Path | None = None) -> Outcome:
    """Submits left on the current branch and its last verdict."""
    top = working_copy(repo)
    path = find_socket(top, socket_path)
    branch = current_branch(top)
    for reply in ask(path, {"op": "status", "branch": branch}):
        if reply.get("event") == "error":
            return Outcome(f"gatetui: {reply['message']}", int(reply.get("code", ExitCode.GATE_ERROR)))
        if reply.get("event") == "status":
            return Outcome(status_text(reply), int(ExitCode.PASS))
    return Outcome("gatetui: the supervisor closed the connection", int(ExitCode.GATE_ERROR))


def status_text(reply: dict[str, Any]) -> str:
    left = max(0, reply["cap"] - reply["submits_used"])
    lines = [f"branch: {reply['branch']}", f"submits: {reply['submits_used']} of {reply['cap']} used, {left} left"]
    if reply.get("escalated"):
        lines.append("escalated: a person has been asked to review; wait for them")
    if reply.get("running"):
        lines.append("a run is in progress")
    last = reply.get("last")
    if last:
        lines += [f"last verdict: {last['verdict']} at {last['head'][:7]}", *last["lines"]]
    else:
        lines.append("last verdict: none yet")
    return "\n".join(lines)


# --- standalone: no supervisor, no cap -----------------------------------------------------


def standalone(repo: Path, message: str, base: str | None) -> Outcome:
    """Gate in this process: the cap and log hiding are not enforced, but
    the gate is `check`'s, hidden tests from the state directory included."""
    import asyncio

    from gatetui.backends.choose import choose_backend
    from gatetui.gate.api import VERDICT_EXIT, gate_once, gate_request
    from gatetui.gate.render import verdict_block
    from gatetui.supervise.state_inputs import headless_inputs

    top = working_copy(repo)
    inputs = headless_inputs(None, top, sys.stderr)  # before the commit: a state directory unread commits nothing
    head = commit_work(top, message).branch  # named by its branch: the progress line shows the sha beside it
    base = base if base is not None else standalone_base(top)
    request = gate_request(top, base, head, inputs)
    _, finished = asyncio.run(gate_once(request, choose_backend("local"), sys.stderr))
    note = (f"standalone: gated in your own process against {base}; the submit cap and log hiding are not "
            "enforced (run a supervisor: `gatetui serve REPO`)")
    return Outcome(verdict_block(finished), int(VERDICT_EXIT[finished.verdict]), note)


def standalone_base(top: Path) -> str:
    """origin/main in a clone, else main: what the agent most likely started from."""
    from gatetui.git.repo import GitRepo

    with GitRepo.open(top) as git:
        try:
            git.resolve("origin/main")
            return "origin/main"
        except BadInput:
            return "main"


def cmd_submit(args: Any) -> int:
    repo = args.repo or Path.cwd()
    if args.standalone:
        outcome = standalone(repo, args.message, args.base)
    else:
        outcome = submit_once(repo, args.message, args.socket, progress=sys.stderr)
    stream = sys.stdout if outcome.code in (ExitCode.PASS, ExitCode.FAIL, ExitCode.CAP_REACHED) else sys.stderr
    print(outcome.text, file=stream, flush=True)
    if outcome.note:
        print(f"gatetui: {outcome.note}", file=sys.stderr, flush=True)
    return outcome.code
