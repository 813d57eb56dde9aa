"""Head's text on the text outputs: `gatetui check` (plain, -v, --json),
`serve`'s log, `submit`'s answer and the MCP tools, each on a real gate of
a head that carries escape sequences, bidi controls and zero-width
characters in a flagged line, a file name, its tests' output and its branch
name. What a terminal receives holds none of them raw, and shows each
escaped; the JSON keeps them, as data."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from gatetui.cli.main import main
from tests.support.hostile_text import (
    BIDI_NAME,
    BIDI_NAME_SHOWN,
    CLIPBOARD,
    CLIPBOARD_SHOWN,
    FORGED_PASS,
    FORGED_PASS_SHOWN,
    unsafe_in,
)
from tests.support.repos import git, write_tree
from tests.support.submitting import BASE, BROKEN, TESTS, Served, served  # noqa: F401  (the fixture)

pytestmark = pytest.mark.xdist_group("test_submit")  # the served supervisor is built once, on one worker

BRANCH = "agent/\u202exif\u0085\u200bz"  # git takes any byte from 0x80 up in a ref name
BRANCH_SHOWN = "agent/\\u202exif\\x85\\u200bz"
ODD_BRANCH = "agent/odd-name"
SKIPPED = f"import pytest\n@pytest.mark.skip  # {FORGED_PASS}\ndef test_add"
LOUD_TEST = f"def test_loud():\n    print({CLIPBOARD!r})\n    assert False, {FORGED_PASS!r}\n"
HEAD = {
    "calc.py": BROKEN,
    "tests/test_calc.py": TESTS.replace("def test_add", SKIPPED),
    "tests/test_loud.py": LOUD_TEST,
}
ODD_FILE = f"tests/test_{BIDI_NAME}.py"  # the gate refuses to judge it: the refusal names it
FLAGGED_SHOWN = f"+ @pytest.mark.skip  # {FORGED_PASS_SHOWN} at tests/test_calc.py:5"


@dataclass(frozen=True)
class Printed:
    code: int
    out: str
    err: str


def check(repo: Path, branch: str, *extra: str) -> Printed:
    """`gatetui check` as a terminal would run it: the bytes it writes."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "gatetui",
            "check",
            str(repo),
            "--base",
            "main",
            "--head",
            branch,
            "--state-dir",
            str(repo.parent / "state"),
            *extra,
        ],
        capture_output=True,
        timeout=600,
    )
    return Printed(
        done.returncode, done.stdout.decode("utf-8", "surrogateescape"), done.stderr.decode("utf-8", "surrogateescape")
    )


def commit_branch(repo: Path, branch: str, files: dict[str, str]) -> None:
    git(repo, "checkout", "-qb", branch, "main")
    write_tree(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"fix {FORGED_PASS}")
    git(repo, "checkout", "-q", "main")


@pytest.fixture(scope="module")
def hostile_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("inert") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write_tree(repo, BASE)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    commit_branch(repo, BRANCH, HEAD)
    commit_branch(repo, ODD_BRANCH, {ODD_FILE: "def test_odd():\n    pass\n"})
    return repo


def line_of(text: str, start: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(start))


@pytest.mark.sandbox
@pytest.mark.install
def test_check_and_check_verbose_print_heads_text_escaped(hostile_repo: Path) -> None:
    printed = check(hostile_repo, BRANCH, "-v")
    assert printed.code == 1
    assert (unsafe_in(printed.out), unsafe_in(printed.err)) == ([], [])
    assert line_of(printed.out, "FAIL nothing new skipped") == f"FAIL nothing new skipped or focused: {FLAGGED_SHOWN}"
    assert printed.out.endswith("verdict: fail\n")
    assert f"] gating {BRANCH_SHOWN} (" in line_of(printed.err, "[   0.")
    assert f"] no_new_skips: fail in 0.0 s ({FLAGGED_SHOWN})" in printed.err
    assert CLIPBOARD_SHOWN in printed.err  # the tests' own output, streamed with -v
    assert f"AssertionError: {FORGED_PASS_SHOWN}" in printed.err
    assert "] verdict: fail in " in printed.err


@pytest.mark.sandbox
@pytest.mark.install
def test_check_json_keeps_heads_text_as_data_and_junit_shows_it_escaped(hostile_repo: Path) -> None:
    junit = hostile_repo.parent / "gate.xml"
    printed = check(hostile_repo, BRANCH, "--json", "--junit", str(junit))
    assert printed.code == 1 and unsafe_in(printed.out) == []  # JSON's own \u escapes: nothing raw
    data = json.loads(printed.out)
    assert {c["id"]: c["detail"] for c in data["checks"]}["no_new_skips"] == (
        f"+ @pytest.mark.skip  # {FORGED_PASS} at tests/test_calc.py:5"
    )
    assert data["head_ref"] == BRANCH
    case = ET.fromstring(junit.read_text()).find(".//testcase[@classname='gatetui.no_new_skips']/failure")
    assert case is not None and case.get("message") == case.text == FLAGGED_SHOWN  # XML 1.0 holds no ESC


@pytest.mark.sandbox
def test_a_refused_file_name_is_shown_escaped_once(hostile_repo: Path) -> None:
    printed = check(hostile_repo, ODD_BRANCH)
    assert printed.code == 1 and (unsafe_in(printed.out), unsafe_in(printed.err)) == ([], [])
    assert line_of(printed.out, "FAIL installs from scratch") == (
        "FAIL installs from scratch: head adds a file whose name the gate cannot judge (not UTF-8, or a control or "
        f"format character in it): tests/test_{BIDI_NAME_SHOWN}.py; rename it"
    )


def mcp_status(clone: Path) -> str:
    """The MCP `status` tool's text, as an MCP client receives it."""

    async def ask() -> str:
        params = StdioServerParameters(command=sys.executable, args=["-m", "gatetui", "mcp"], cwd=str(clone))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            answer = await session.call_tool("status", {})
        assert not answer.is_error
        return "\n".join(part.text for part in answer.content)  # type: ignore[union-attr]

    return asyncio.run(ask())


@pytest.mark.sandbox
@pytest.mark.install
def test_submit_serve_and_mcp_show_heads_text_escaped(
    served: Served,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    clone = served.clone("inert", BRANCH)
    write_tree(clone, HEAD)
    code = main(["submit", "--repo", str(clone), "-m", f"done {FORGED_PASS}"])
    out, err = capsys.readouterr()
    assert code == 1 and (unsafe_in(out), unsafe_in(err)) == ([], [])
    assert line_of(out, "FAIL nothing new skipped") == f"FAIL nothing new skipped or focused: {FLAGGED_SHOWN}"
    assert out.endswith("verdict: fail\n")
    assert f"submit 1 of 3 for {BRANCH_SHOWN} at " in err and f"1 of 3 submits used on {BRANCH_SHOWN}; 2 left" in err
    said = served.said()  # the supervisor's own log
    assert unsafe_in(said) == []
    assert f"gatetui serve: submit 1 of 3 on {BRANCH_SHOWN} at " in said
    assert f"gatetui serve: {BRANCH_SHOWN} at " in said
    status = mcp_status(clone)
    assert unsafe_in(status) == []
    assert status.splitlines()[0] == f"branch: {BRANCH_SHOWN}"
    assert f"FAIL nothing new skipped or focused: {FLAGGED_SHOWN}" in status.splitlines()
