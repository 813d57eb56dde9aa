"""`gatetui submit`: the agent's finish tool, run in its working copy.

Asks the supervisor through its socket (see serve.py) whether it takes a
submit on the current branch, then commits the work there, hands it the
commit, waits, and prints the verdict, one line per
check. Exit 0 pass, 1 fail or review, 2 refused (a branch not watched,
nothing new), 3 no supervisor (or the gate could not run), 4 the cap is
reached. The MCP server (mcp.py) calls the same `submit_once` and
`status_once`.

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
from collections.abc import Generator, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from dulwich.errors import NotGitRepository
from dulwich.repo import Repo

from gatetui.agent.commit import commit_work, current_branch, has_work, head_of, undo, working_copy
from gatetui.errors import BadInput, ExitCode
from gatetui.inert import inert, inert_line
from gatetui.supervise.serve import default_socket

# What the agent hears when no supervisor answers: nothing was submitted and a
# person must act. Not how to start one or to gate without the cap: the person
# reads that in the README ("Let the agent submit").
TELL_THE_PERSON = "nothing was submitted or committed; stop and tell the person who supervises your work"


@dataclass(frozen=True)
class Outcome:
    """What the agent is told: `text` (stdout), `note` (stderr), the exit
    code; ready to show (head's text in them already inert)."""

    text: str
    code: int
    note: str = ""


class NoSupervisor(BadInput):
    exit_code = ExitCode.GATE_ERROR


# --- the working copy ---------------------------------------------------------------


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


def ask(path: Path, request: dict[str, Any]) -> Generator[dict[str, Any], None, None]:
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


def submit_once(repo: Path, message: str = "", socket_path: Path | None = None, progress: Any = None) -> Outcome:
    """Commit the work, have the supervisor gate it, and say the verdict.
    What the supervisor refuses up front (a branch it does not watch, the
    cap reached) is refused before anything is written; a refusal only
    heard after the commit (a race, a gate that could not start, no answer)
    takes the commit back."""
    top = working_copy(repo)
    path = find_socket(top, socket_path)
    branch = current_branch(top)
    head = head_of(top)
    if not has_work(top):  # nothing to commit: HEAD is the submit, and nothing is written
        if not head:
            raise BadInput(f"nothing to submit: {branch} has no commit and no change yet")
        return _Replies(branch, head, progress).hear(ask(path, _submit_request(top, branch, head)))
    refused = ask_first(path, top, branch, head)
    if refused is not None:
        return refused
    done = commit_work(top, message)
    replies = _Replies(done.branch, done.head, progress)
    try:
        outcome = replies.hear(ask(path, _submit_request(top, done.branch, done.head)))
    finally:
        if not replies.accepted:
            undo(top, done)
    return outcome


def _submit_request(top: Path, branch: str, head: str) -> dict[str, Any]:
    return {"op": "submit", "repo": str(top), "branch": branch, "head": head}


def ask_first(path: Path, top: Path, branch: str, head: str) -> Outcome | None:
    """Whether the supervisor takes a submit on `branch` now, asked before
    the commit: None when it does, else what the agent is told. A
    supervisor older than `can_submit` cannot say: the submit goes on, and
    its refusal takes the commit back."""
    request = {"op": "can_submit", "repo": str(top), "branch": branch, "head": head}
    with closing(ask(path, request)) as replies:
        for reply in replies:
            if reply.get("event") == "can_submit":
                return None
            if reply.get("event") == "error" and str(reply.get("message", "")).startswith("unknown request"):
                return None
            return _Replies(branch, head, None).hear(iter([reply]))
    return Outcome(
        "gatetui: the supervisor closed the connection without an answer: submit again", int(ExitCode.GATE_ERROR)
    )


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
                    print(
                        f"gatetui: submit {reply['submit']} of {reply['cap']} for {inert_line(self.branch)} at "
                        f"{self.head[:7]}: the supervisor is gating it...",
                        file=self.progress,
                        flush=True,
                    )
            elif event in ("verdict", "unchanged"):
                self.accepted = event == "verdict"
                return self._verdict(reply)
            elif event == "escalated":
                return Outcome(inert(str(reply["message"])), int(ExitCode.CAP_REACHED))
            elif event == "error":
                return Outcome(f"gatetui: {inert(str(reply['message']))}", int(reply.get("code", ExitCode.GATE_ERROR)))
        return Outcome(
            "gatetui: the supervisor closed the connection without a verdict: submit again", int(ExitCode.GATE_ERROR)
        )

    def _verdict(self, reply: dict[str, Any]) -> Outcome:
        code = ExitCode.PASS if reply["verdict"] == "pass" else ExitCode.FAIL
        left = reply["cap"] - reply["submits_used"]
        note = f"{reply['submits_used']} of {reply['cap']} submits used on {inert_line(self.branch)}; " + (
            f"{left} left" if left > 0 else "the next submit goes to a person"
        )
        if reply["event"] == "unchanged":
            note = (
                f"nothing new since your last submit ({reply['head'][:7]}: {reply['verdict']}); "
                f"this one was not counted. {note}"
            )
        lines = [inert_line(str(line)) for line in reply["lines"]]
        return Outcome("\n".join([*lines, f"verdict: {inert_line(str(reply['verdict']))}"]), int(code), note)


def status_once(repo: Path, socket_path: Path | None = None) -> Outcome:
    """Submits left on the current branch and its last verdict."""
    top = working_copy(repo)
    path = find_socket(top, socket_path)
    branch = current_branch(top)
    for reply in ask(path, {"op": "status", "branch": branch}):
        if reply.get("event") == "error":
            return Outcome(f"gatetui: {inert(str(reply['message']))}", int(reply.get("code", ExitCode.GATE_ERROR)))
        if reply.get("event") == "status":
            return Outcome(status_text(reply), int(ExitCode.PASS))
    return Outcome("gatetui: the supervisor closed the connection", int(ExitCode.GATE_ERROR))


def status_text(reply: dict[str, Any]) -> str:
    left = max(0, reply["cap"] - reply["submits_used"])
    lines = [
        inert_line(f"branch: {reply['branch']}"),
        f"submits: {reply['submits_used']} of {reply['cap']} used, {left} left",
    ]
    if reply.get("escalated"):
        lines.append("escalated: a person has been asked to review; wait for them")
    if reply.get("running"):
        lines.append("a run is in progress")
    last = reply.get("last")
    if last:
        lines += [inert_line(f"last verdict: {last['verdict']} at {last['head'][:7]}"), *map(inert_line, last["lines"])]
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
    from gatetui.supervise.gate_inputs import headless_inputs

    top = working_copy(repo)
    inputs = headless_inputs(None, top, sys.stderr)  # before the commit: a state directory unread commits nothing
    head = commit_work(top, message).branch  # named by its branch: the progress line shows the sha beside it
    base = base if base is not None else standalone_base(top)
    request = gate_request(top, base, head, inputs)
    _, finished = asyncio.run(gate_once(request, choose_backend("local"), sys.stderr))
    note = (
        f"standalone: gated in your own process against {base}; the submit cap and log hiding are not "
        "enforced (run a supervisor: `gatetui serve REPO`)"
    )
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
