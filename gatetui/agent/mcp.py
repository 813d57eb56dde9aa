"""`gatetui mcp`: the `submit` and `status` tools over the Model Context
Protocol (stdio), for agent clients that speak MCP.

Run in (or pointed at) the agent's working copy; each tool does what the
command does (submit.py) and answers with the same text, head's in it made
inert: a client shows the text to a person as well as to its model, and an
escape sequence in a quoted line would act on that person's terminal.
stdout is the protocol here: nothing else may print to it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from gatetui.agent.submit import Outcome, status_once, submit_once
from gatetui.errors import ExitCode, GateError
from gatetui.inert import inert

INSTRUCTIONS = (
    "Use `submit` as your finish tool: it commits your work to the current branch and has the supervisor "
    "gate it on a fresh machine. It answers one line per check (`pass <title>` / `FAIL <title>: <detail>`) "
    "and the verdict. Fix what FAILs and submit again; after the cap a person takes over. `status` says how "
    "many submits are left and the last verdict."
)

MEANING = {
    ExitCode.PASS: "the change passed the gate",
    ExitCode.FAIL: "the change did not pass: fix what FAILs, then submit again",
    ExitCode.CAP_REACHED: "the submit cap is reached: stop and wait for a person",
}


def build_server(repo: Path, socket: Path | None = None) -> MCPServer:
    server: MCPServer = MCPServer("gatetui", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(
        description="Commit your work and have the supervisor gate it; counts against the cap. "
        "Call it when you believe the task is done."
    )
    def submit(message: str = "") -> str:
        return _answer(lambda: submit_once(repo, message, socket))

    @server.tool(description="Submits left on the current branch and the last verdict.")
    def status() -> str:
        return _answer(lambda: status_once(repo, socket), explain=False)

    return server


def _answer(call: Callable[[], Outcome], explain: bool = True) -> str:
    try:
        outcome = call()
    except GateError as err:
        raise ToolError(inert(str(err))) from None
    if outcome.code not in MEANING:
        raise ToolError(outcome.text)
    lines = [outcome.text]
    if outcome.note:
        lines.append(outcome.note)
    if explain:
        lines.append(f"({MEANING[ExitCode(outcome.code)]})")
    return "\n".join(lines)


def run_mcp(repo: Path, socket: Path | None = None) -> int:
    build_server(repo, socket).run("stdio")
    return int(ExitCode.PASS)
