"""`gatetui mcp` driven by the MCP SDK's own stdio client: the `status` and
`submit` tools, run in a real clone, answered by a real `gatetui serve`."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from tests.support.repos import write_tree
from tests.support.submitting import BROKEN, TESTS, Served, served  # noqa: F401  (the fixture)

pytestmark = pytest.mark.asyncio


def text(result: object) -> str:
    return "\n".join(part.text for part in result.content)  # type: ignore[attr-defined]


async def gating(
    session: ClientSession, submitting: asyncio.Task[CallToolResult], timeout: float = 60.0
) -> CallToolResult:
    """`status` asked until it says the submit is being gated; that answer."""
    try:
        async with asyncio.timeout(timeout):
            while True:
                assert not submitting.done(), "the submit ended before `status` ever said a run was in progress"
                answer = await session.call_tool("status", {})
                if "a run is in progress" in text(answer).splitlines():
                    return answer
                await asyncio.sleep(0.05)  # paces the asking; the deadline above bounds it
    except TimeoutError:
        pytest.fail(f"`status` never said the submit was being gated (a run is in progress) within {timeout} s")


@pytest.mark.sandbox
@pytest.mark.install
async def test_the_submit_and_status_tools(served: Served) -> None:  # noqa: F811
    clone = served.clone("mcp", "agent/mcp")
    write_tree(
        clone,
        {
            "calc.py": BROKEN,
            "tests/test_calc.py": TESTS.replace("def test_add", "import pytest\n@pytest.mark.skip\ndef test_add"),
        },
    )
    params = StdioServerParameters(command=sys.executable, args=["-m", "gatetui", "mcp"], cwd=str(clone))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        assert sorted(t.name for t in tools.tools) == ["status", "submit"]
        before = await session.call_tool("status", {})
        submitting = asyncio.create_task(
            session.call_tool("submit", {"message": "through mcp"}, read_timeout_seconds=300)
        )
        during = await gating(session, submitting)  # answered while the gate runs
        gated_meanwhile = submitting.done()
        submitted = await submitting
        after = await session.call_tool("status", {})
    assert (during.is_error, text(during).splitlines()[0], gated_meanwhile) == (False, "branch: agent/mcp", False)
    assert "a run is in progress" in text(during).splitlines()
    assert (before.is_error, text(before)) == (
        False,
        "branch: agent/mcp\nsubmits: 0 of 3 used, 3 left\nlast verdict: none yet",
    )
    block = (
        "pass installs from scratch\npass suite passes 3 of 3 runs\npass no tests removed\n"
        "FAIL nothing new skipped or focused: + @pytest.mark.skip at tests/test_calc.py:5\n"
        "FAIL old tests pass on new code: tests/test_calc.py::test_add fails under base's tests; "
        "sealed files changed at head: tests/test_calc.py\nskip hidden tests pass: not configured\n"
        "pass changed code runs under the tests\n"
        "skip the tests catch bugs in the changed code: not run: the change already fails (no_new_skips)\n"
        "verdict: fail"
    )
    assert (submitted.is_error, text(submitted)) == (
        False,
        block + "\n1 of 3 submits used on agent/mcp; 2 left\n"
        "(the change did not pass: fix what FAILs, then submit again)",
    )
    status = text(after).splitlines()
    assert status[:2] == ["branch: agent/mcp", "submits: 1 of 3 used, 2 left"]
    assert status[2].startswith("last verdict: fail at ") and "\n".join(status[3:]) == block.rsplit("\n", 1)[0]


@pytest.mark.sandbox
async def test_without_a_supervisor_the_tool_says_so_as_an_error(tmp_path: Path) -> None:
    from tests.support.repos import git
    from tests.support.submitting import make_supervised

    repo = make_supervised(tmp_path)
    git(tmp_path, "clone", "-q", str(repo), str(tmp_path / "agent"))
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "gatetui", "mcp", "--repo", str(tmp_path / "agent")]
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("status", {})
    assert result.is_error is True
    assert text(result) == (
        f"Error executing tool status: no supervisor is running for {repo}: nothing was "
        "submitted or committed; stop and tell the person who supervises your work"
    )
