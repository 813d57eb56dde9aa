"""The local backend's isolation as root: a uid per run, namespaces, limits,
and cleanup after a crashed supervisor. Where it cannot isolate, it says so."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from gatetui.backends import confine
from gatetui.backends.isolation import Isolation, probe_isolation
from gatetui.backends.local import LocalBackend
from gatetui.backends.local_workspace import LocalWorkspace
from gatetui.backends.uids import UID_COUNT, UID_FIRST, UidPool, known_id, login_range, uid_processes
from gatetui.errors import BadInput
from gatetui.gate.checks import CheckId, Status
from gatetui.gate.events import RunFinished
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from tests.support.gating import shared_layers
from tests.support.local import export_files, run
from tests.support.repos import MakeRepo

needs_isolation = pytest.mark.skipif(
    not probe_isolation().full, reason=f"cannot isolate here: {probe_isolation().reason}"
)


async def isolated(tmp_path: Path, files: dict[str, str] | None = None) -> LocalWorkspace:
    return await LocalBackend(work_root=tmp_path / "work", isolate=True).open(export_files(files or {}), "t")


@pytest.mark.sandbox
@needs_isolation
def test_commands_run_as_the_runs_own_uid_in_its_own_tree(tmp_path: Path) -> None:
    async def go() -> tuple[int | None, str, str]:
        ws = await isolated(tmp_path, {"a.txt": "x\n"})
        _, text = await run(ws, "id -u; id -g; pwd; stat -c %u a.txt")
        await ws.close()
        return ws.uid, text, ws.path

    uid, text, path = asyncio.run(go())
    assert uid is not None and UID_FIRST <= uid < UID_FIRST + UID_COUNT
    assert text.split() == [str(uid), str(uid), path, str(uid)]


@pytest.mark.sandbox
@needs_isolation
def test_the_runs_uid_has_a_name_and_a_home(tmp_path: Path) -> None:
    """Suites that ask who they run as (getpass.getuser(), ~ expansion) get
    an answer, and a uid without an account is no sign of the gate."""

    async def go() -> tuple[str, str, str, str]:
        ws = await isolated(tmp_path)
        try:
            _, seen = await run(
                ws,
                "id -un; python3 -c 'import getpass, os; print(getpass.getuser(), "
                'os.path.expanduser("~" + getpass.getuser()))\'; ls /etc/passwd',
            )
        finally:
            await ws.close()
        return seen, ws.where.user, ws.where.home, Path("/etc/passwd").read_text()

    seen, user, home, host_passwd = asyncio.run(go())
    assert seen.split() == [user, user, home, "/etc/passwd"]
    assert f"{user}:" not in host_passwd  # the host's own file is untouched


@pytest.mark.sandbox
@needs_isolation
def test_no_two_runs_see_the_same_paths_or_host_name(tmp_path: Path) -> None:
    """Code that is right only at the gate's paths or on its host has no
    fixed value to look for: each run's are drawn (its copies share them)."""

    async def one() -> tuple[str, str]:
        ws = await isolated(tmp_path)
        try:
            (copy,) = await ws.fork(1, export_files({}))
            _, seen = await run(ws, 'pwd; echo "$HOME"; hostname')
            _, copy_seen = await run(copy, 'pwd; echo "$HOME"')
            await copy.close()
        finally:
            await ws.close()
        assert copy_seen.split() == seen.split()[:2]
        return seen, ws.path

    (first, path), (second, _) = asyncio.run(one()), asyncio.run(one())
    assert first.split()[0] == path and path.startswith("/tmp/")
    assert [a == b for a, b in zip(first.split(), second.split())] == [False, False, False]
    assert "gatetui" not in first + second
    assert first.split()[2] != socket.gethostname()


@pytest.mark.sandbox
@needs_isolation
def test_the_supervisors_home_and_private_folders_are_refused(tmp_path: Path) -> None:
    # a root-only folder the run can see: /tmp and /var/tmp are its own now
    secret = Path(tempfile.mkdtemp(prefix="gatetui-test-secret-", dir="/var/lib"))
    (secret / "key").write_text("do not read")
    try:

        async def go() -> str:
            ws = await isolated(tmp_path)
            _, text = await run(ws, f"cat {secret}/key; ls {Path.home()}; echo done")
            await ws.close()
            return text

        text = asyncio.run(go())
    finally:
        (secret / "key").unlink()
        secret.rmdir()
    assert "do not read" not in text
    assert text.count("Permission denied") == 2 and text.endswith("done\n")


@pytest.mark.sandbox
@needs_isolation
def test_tests_get_loopback_alone_and_installs_keep_the_network(tmp_path: Path) -> None:
    async def go() -> tuple[str, str]:
        ws = await isolated(tmp_path)
        chunks: list[str] = []
        await ws.run("ip -o link | cut -d: -f2", timeout=30, on_output=chunks.append, network=False)
        without = "".join(chunks)
        chunks.clear()
        await ws.run("ip -o link | cut -d: -f2", timeout=30, on_output=chunks.append, network=True)
        await ws.close()
        return without, "".join(chunks)

    without, with_network = asyncio.run(go())
    assert without.split() == ["lo"]
    assert len(with_network.split()) > 1


@pytest.mark.sandbox
@needs_isolation
def test_limits_hold_for_the_code_under_test(tmp_path: Path) -> None:
    async def go() -> str:
        ws = await isolated(tmp_path)
        _, text = await run(
            ws,
            "python3 -c 'import resource as r; print(*(r.getrlimit(x)[0] for x in "
            "(r.RLIMIT_CORE, r.RLIMIT_NPROC, r.RLIMIT_FSIZE)))'",
        )
        await ws.close()
        return text

    core, nproc, fsize = (int(v) for v in asyncio.run(go()).split())
    assert (core, nproc, fsize) == (0, 4096, 8 << 30)


@pytest.mark.sandbox
@needs_isolation
def test_a_private_tmp_holds_only_the_run(tmp_path: Path) -> None:
    (Path("/tmp") / f"gatetui-visible-{os.getpid()}").write_text("host tmp")
    try:

        async def go() -> tuple[str, list[str]]:
            ws = await isolated(tmp_path)
            _, text = await run(ws, "ls -A /tmp; echo --; ls -A /home")
            await ws.close()
            where = ws.where
            shown = (
                where.tree,
                where.reports,
                where.scratch_path("bytecode"),
                *([confine.SUPERVISOR_BIN] if confine.SUPERVISOR_BIN else []),
            )
            return text, sorted(p.split("/")[2] for p in shown), where.home

        text, own, home = asyncio.run(go())
        tmp, homes = text.split("--")
        # the run's tree and reports folders and its bytecode folder, nothing of the host's
        # (but the supervisor's own executables, where it lies under /tmp: see the next test);
        # its home alone in /home, as a machine with one user has it
        assert sorted(tmp.split()) == own
        assert (homes.split(), home) == ([home.rsplit("/", 1)[1]], f"/home/{home.rsplit('/', 1)[1]}")
    finally:
        (Path("/tmp") / f"gatetui-visible-{os.getpid()}").unlink()


SHARED = ("/var/tmp", "/dev/shm", "/run/lock")  # writable by anyone on a host; none private before
EXFIL = "for d in /var/tmp /dev/shm /run/lock; do echo hidden-test > $d/exfil; echo $d: $(ls -A $d); done"


@pytest.mark.sandbox
@needs_isolation
@pytest.mark.parametrize("network", [False, True], ids=["test-run", "install"])
def test_shared_folders_are_empty_private_and_gone_with_the_command(tmp_path: Path, network: bool) -> None:
    """/var/tmp, /dev/shm and /run/lock: what a command writes there (hidden
    tests copied out during the hidden run, a note from one run to the next)
    reaches neither the host nor the next command, and the host's own files
    there are not shown."""
    host = [Path(folder) / f"gatetui-host-{os.getpid()}" for folder in SHARED]
    for planted in host:
        planted.write_text("the host's")
    try:

        async def go() -> tuple[str, str, str]:
            ws = await isolated(tmp_path)
            try:
                _, first = await run(ws, EXFIL, network=network)
                _, second = await run(
                    ws, "for d in /var/tmp /dev/shm /run/lock; do echo $d: $(ls -A $d); done", network=network
                )
                _, run_dir = await run(ws, "ls -A /run", network=network)
            finally:
                await ws.close()
            return first, second, run_dir

        first, second, run_dir = asyncio.run(go())
        left = [str(p) for folder in SHARED for p in Path(folder).glob("exfil")]
    finally:
        for planted in host:
            planted.unlink()
        for folder in SHARED:  # what a failed run left on the host
            (Path(folder) / "exfil").unlink(missing_ok=True)
    assert (first, second, left) == (
        "/var/tmp: exfil\n/dev/shm: exfil\n/run/lock: exfil\n",
        "/var/tmp:\n/dev/shm:\n/run/lock:\n",
        [],
    )
    if not network:  # a test run's /run is its own too: nothing of the host's services
        assert run_dir.split() == ["lock", "shm"]


@pytest.mark.sandbox
@needs_isolation
@pytest.mark.parametrize("network", [False, True], ids=["test-run", "install"])
def test_a_folder_anyone_may_write_that_no_rule_knows_is_read_only(tmp_path: Path, network: bool) -> None:
    """A host may have more world-writable folders than /var/tmp and the
    like: the command sees the host's root file system read-only."""
    open_door = Path("/var/lib") / f"gatetui-open-{os.getpid()}"
    open_door.mkdir(mode=0o777)
    open_door.chmod(0o1777)
    try:

        async def go() -> str:
            ws = await isolated(tmp_path)
            try:
                _, said = await run(ws, f"echo note > {open_door}/note && echo wrote || echo refused", network=network)
            finally:
                await ws.close()
            return said

        said = asyncio.run(go())
        left = sorted(p.name for p in open_door.iterdir())
    finally:
        shutil.rmtree(open_door, ignore_errors=True)
    assert (said.splitlines()[-1], left) == ("refused", [])


@pytest.mark.sandbox
@needs_isolation
def test_a_crashed_supervisors_run_is_cleaned_at_the_next_start(tmp_path: Path) -> None:
    """A claim whose supervisor is dead: its uid's processes are killed and
    its run folder removed before the next run opens."""
    work = tmp_path / "work"
    root = work / "gatetui-crashed"
    root.mkdir(parents=True)
    (root / "ws").mkdir()
    pool = UidPool(work / ".uids")
    uid = pool.claim(root)
    dead = subprocess.Popen(["true"])
    dead.wait()
    (work / ".uids" / str(uid)).write_text(json.dumps({"pid": dead.pid, "root": str(root)}))
    sleeper = subprocess.Popen(
        ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "sleep", "300"], start_new_session=True
    )
    try:
        deadline = time.monotonic() + 10  # setpriv takes the uid a moment after it starts
        while uid_processes(uid) != [sleeper.pid] and time.monotonic() < deadline:
            time.sleep(0.02)
        assert uid_processes(uid) == [sleeper.pid], f"the sleeper was not uid {uid}'s only process within 10 s"

        async def go() -> None:
            ws = await LocalBackend(work_root=work, isolate=True).open(export_files({}), "next")
            await ws.close()

        asyncio.run(go())
        deadline = time.monotonic() + 5
        while sleeper.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sleeper.poll() == -signal.SIGKILL, "the crashed run's sleeper was not killed within 5 s of the next open"
        assert uid_processes(uid) == []
        assert root.exists() is False
        assert (work / ".uids" / str(uid)).exists() is False
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
        sleeper.wait()


def test_without_isolation_the_notes_say_what_is_missing(tmp_path: Path) -> None:
    backend = LocalBackend(work_root=tmp_path, isolate=False)
    assert backend.isolation.to_json()["enforced"] is False
    (note,) = backend.notes
    assert note.startswith("local backend does not enforce: log hiding")
    assert "no network for the tests" in note


def test_full_isolation_has_no_notes() -> None:
    full = Isolation(True, True, True, True, True)
    assert (full.notes(), full.to_json()["enforced"]) == ((), True)


def test_the_uid_range_is_the_supervisors_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATETUI_UID_RANGE", "500000-500009")
    pool = LocalBackend(work_root=tmp_path).uids
    assert (pool.first, pool.count) == (500000, 10)


@pytest.mark.parametrize("text", ["12", "5-2", "x-y", "10-20"])
def test_a_bad_uid_range_is_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv("GATETUI_UID_RANGE", text)
    with pytest.raises(BadInput, match=r"GATETUI_UID_RANGE=.* is not FIRST-LAST"):
        LocalBackend(work_root=tmp_path)


@pytest.mark.sandbox
@needs_isolation
def test_runs_take_uids_from_the_configured_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATETUI_UID_RANGE", "510000-510000")

    async def go() -> str:
        ws = await isolated(tmp_path)
        _, text = await run(ws, "id -u")
        await ws.close()
        return text

    assert asyncio.run(go()) == "510000\n"


@pytest.mark.sandbox
@pytest.mark.install
@needs_isolation
@pytest.mark.parametrize("allowed", [False, True], ids=["default", "test_network-true"])
def test_base_config_may_give_the_test_runs_the_network(make_repo: MakeRepo, allowed: bool) -> None:
    """Loopback alone by default; `test_network = true` in base's config
    gives the runs the network, and the digest state says so."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    config = "\n[tool.gatetui]\ntest_network = true\n" if allowed else ""
    test = (
        f"import socket\n\ndef test_service():\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n"
    )
    repo = make_repo(
        {
            "pyproject.toml": f'[project]\nname = "p"\nversion = "0"\n{config}',
            "p/__init__.py": "",
            "tests/test_p.py": "def test_ok():\n    pass\n",
        },
        {"tests/test_service.py": test},
    )
    try:

        async def go() -> RunFinished:
            plan = make_plan(GateRequest(repo, "main", "agent/x"))
            backend = LocalBackend(work_root=repo.parent / "work", layers=shared_layers())
            events = [e async for e in run_gate(plan, backend)]
            assert isinstance(events[-1], RunFinished)
            return events[-1]

        done = asyncio.run(go())
    finally:
        server.close()
    runs = {r.id: r for r in done.results}[CheckId.RUNS]
    assert (runs.status is Status.PASS, done.digests.to_json().get("test_network", False)) == (allowed, allowed)


# --- which uids a run may get -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("UID_MIN\t\t\t 1000\nUID_MAX\t\t\t60000\n#SYS_UID_MAX 999\n", (1000, 59001)),
        ("UID_MIN 2000\nUID_MAX 30000\n", (2000, 28001)),
        ("UID_MIN 10\nUID_MAX 5000\n", (1000, 4001)),  # never a system account's uid
        ("UID_MIN 5000\nUID_MAX 5050\n", (1000, 59001)),  # too few to draw from: the usual range
        ("", (1000, 59001)),
    ],
)
def test_runs_draw_uids_from_the_machines_range_for_people(
    tmp_path: Path, text: str, expected: tuple[int, int]
) -> None:
    (tmp_path / "login.defs").write_text(text)
    assert login_range(str(tmp_path / "login.defs")) == expected


def test_without_login_defs_the_range_is_the_usual_one(tmp_path: Path) -> None:
    assert login_range(str(tmp_path / "missing")) == (1000, 59001)


def test_a_uid_or_gid_the_machine_names_is_never_handed_out(tmp_path: Path) -> None:
    """root (0) is named on every machine: a pool of it alone has nothing to give."""
    with pytest.raises(OSError, match="^no free uid left for a gate run$"):
        UidPool(tmp_path / "uids", first=0, count=1).claim(tmp_path)
    assert list((tmp_path / "uids").iterdir()) == []
    assert (known_id(0), known_id(UID_FIRST + UID_COUNT + 123_456)) == (True, False)


@pytest.mark.sandbox
@needs_isolation
def test_the_bytecode_folder_is_the_sandboxs_and_read_only_to_the_command(tmp_path: Path) -> None:
    """A run's pycache prefix: made before the command starts, root's, and
    nothing the command can write into (no bytecode planted for later)."""

    async def go() -> tuple[str, str]:
        ws = await isolated(tmp_path)
        folder = ws.scratch_path("bytecode")
        _, text = await run(ws, f"stat -c '%u %a' {folder}; mkdir {folder}/x 2>/dev/null && echo wrote || echo refused")
        await ws.close()
        return folder, text

    folder, text = asyncio.run(go())
    assert folder.startswith("/tmp/bytecode-")
    assert text.split("\n")[:2] == ["0 755", "refused"]


@pytest.mark.sandbox
@needs_isolation
def test_a_supervisor_under_tmp_shows_its_executables_read_only_at_their_own_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A supervisor installed under /tmp (a CI clone): the uv its python
    installs run by absolute path is there in the run's private /tmp, and
    nothing the command does changes it."""
    folder = Path(tempfile.mkdtemp(prefix="gatetui-supervisor-", dir="/tmp")) / ".venv" / "bin"
    folder.mkdir(parents=True)
    tool = folder / "tool"
    tool.write_text("#!/bin/sh\necho tool ran\n")
    tool.chmod(0o755)
    folder.parent.parent.chmod(0o755)
    monkeypatch.setattr(confine, "SUPERVISOR_BIN", str(folder))
    try:

        async def go() -> str:
            ws = await isolated(tmp_path)
            _, text = await run(
                ws,
                f"{tool}; (echo x > {tool}) 2>/dev/null && echo wrote || echo refused; "
                f"touch {folder}/planted 2>/dev/null && echo planted || echo refused",
            )
            await ws.close()
            return text

        assert asyncio.run(go()).split("\n")[:3] == ["tool ran", "refused", "refused"]
        assert tool.read_text() == "#!/bin/sh\necho tool ran\n" and sorted(os.listdir(folder)) == ["tool"]
    finally:
        shutil.rmtree(folder.parent.parent)
