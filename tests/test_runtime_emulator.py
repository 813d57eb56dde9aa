"""The emulator, driven by the real, unmodified withruntime SDK.

These pin the wire protocol the backend relies on (create, exec whole and
streamed, the follow from a cursor, files, fork, list by label, delete), and
that each injected fault looks to the SDK as the real API's would: the SDK's
own retry rules must take over, not special code in the emulator.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import withruntime

from tests.runtime_emulator import Emulator
from tests.runtime_emulator.fixtures import KEY, emulator  # noqa: F401 - a fixture


def test_exec_runs_for_real_whole_and_streamed(emulator: Emulator) -> None:
    client = withruntime.Runtime()
    sandbox = client.sandboxes.create(labels={"app": "emu-test"}, timeout_seconds=600)
    assert sandbox.state == "running"
    whole = sandbox.exec("echo hi; echo err >&2; exit 3")
    assert (whole.exit_code, whole.stdout, whole.stderr) == (3, "hi\n", "err\n")
    chunks: list[str] = []
    streamed = sandbox.exec("for i in 1 2 3; do echo line$i; sleep 0.05; done", on_stdout=chunks.append)
    assert (streamed.exit_code, "".join(chunks)) == (0, "line1\nline2\nline3\n")
    assert [s.id for s in client.sandboxes.list(labels={"app": "emu-test"})] == [sandbox.id]
    assert client.sandboxes.list(labels={"app": "other"}).data == []
    sandbox.delete()
    assert emulator.live() == []


def test_a_stream_cut_after_start_is_followed_from_its_cursor(emulator: Emulator) -> None:
    sandbox = withruntime.Runtime().sandboxes.create()
    emulator.faults.cut_streams = 1
    chunks: list[str] = []
    result = sandbox.exec("echo one; sleep 0.3; echo two", on_stdout=chunks.append)
    assert (result.exit_code, "".join(chunks)) == (0, "one\ntwo\n")
    follows = [r for r in emulator.requests if r.endswith("/output")]
    assert len(follows) == 1
    sandbox.delete()


def test_forks_see_the_same_path_and_keep_their_own_files(emulator: Emulator) -> None:
    sandbox = withruntime.Runtime().sandboxes.create()
    home = sandbox.exec("pwd").stdout.strip()
    sandbox.exec(f"echo original > {home}/note; printf '#!/bin/sh\\ncat {home}/note\\n' > tool; chmod +x tool")
    copies = sandbox.fork(2)
    copies[0].exec("echo changed > note")
    assert [c.exec("pwd").stdout.strip() for c in copies] == [home, home]
    assert copies[0].exec(f"{home}/tool").stdout == "changed\n"
    assert copies[1].exec(f"{home}/tool").stdout == "original\n"
    assert sandbox.exec("cat note").stdout == "original\n"
    for box in (*copies, sandbox):
        box.delete()


def test_files_upload_read_and_a_missing_file(emulator: Emulator, tmp_path: Path) -> None:
    sandbox = withruntime.Runtime().sandboxes.create()
    home = sandbox.exec("pwd").stdout.strip()
    (tmp_path / "tree" / "sub").mkdir(parents=True)
    (tmp_path / "tree" / "sub" / "b.txt").write_text("bee")
    sandbox.files.upload(str(tmp_path / "tree"), f"{home}/tree")
    assert sandbox.files.read(f"{home}/tree/sub/b.txt") == b"bee"
    sandbox.files.write(f"{home}/w.txt", b"written")
    assert sandbox.exec("cat w.txt").stdout == "written"
    with pytest.raises(withruntime.NotFoundError):
        sandbox.files.read(f"{home}/nothing")
    sandbox.delete()


def test_503_and_429_are_retried_by_the_sdk(emulator: Emulator) -> None:
    sandbox = withruntime.Runtime().sandboxes.create()
    emulator.faults.unavailable, emulator.faults.unavailable_on = 2, ":exec"
    assert sandbox.exec("echo ok").stdout == "ok\n"
    assert sum(r.endswith(":exec") for r in emulator.requests) == 3
    emulator.faults.rate_limited, emulator.faults.rate_retry_ms = 1, 300
    started = time.monotonic()
    assert sandbox.exec("echo again").stdout == "again\n"
    assert time.monotonic() - started >= 0.25
    sandbox.delete()


def test_a_wrong_key_is_refused(emulator: Emulator) -> None:
    with pytest.raises(withruntime.AuthenticationError) as refused:
        withruntime.Runtime(api_key="rtk_wrong").sandboxes.create()
    assert refused.value.code == "unauthorized"


def test_commands_never_see_the_key(emulator: Emulator) -> None:
    sandbox = withruntime.Runtime().sandboxes.create()
    env = sandbox.exec("env").stdout
    assert KEY not in env and "RUNTIME_" not in env
    assert "HOME=" in env
    sandbox.delete()


def test_a_sandbox_ends_at_its_time_limit(emulator: Emulator) -> None:
    withruntime.Runtime().sandboxes.create(timeout_seconds=1)
    assert len(emulator.live()) == 1
    time.sleep(1.5)
    assert emulator.live() == []
