"""The runtime backend, through the real withruntime SDK, against the emulator.

Each fault Runtime can answer ends in a retried success or one clear line
(a BackendError, which the runner turns into `error` checks); the key never
shows; every sandbox of a run is deleted however the run ends, and those a
crashed run left are deleted at start. A subset of the sample repos is gated
through this backend and must get the verdicts the local backend gets (its
scenario.toml, which tests/gated/test_gate_samples.py holds the local backend to).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import withruntime
from hypothesis import given
from hypothesis import strategies as st

from gatetui.backends.runtime import APP, RuntimeBackend, RuntimeSettings
from gatetui.backends.runtime_admission import CAP_VARIABLE
from gatetui.backends.runtime_network import GO_SETTINGS, go_access, index_access, npm_access, pip_access
from gatetui.backends.runtime_workspace import RuntimeWorkspace
from gatetui.cli.main import main
from gatetui.errors import BackendError, ExitCode
from gatetui.gate.checks import CheckId
from gatetui.gate.events import CheckStarted, GateEvent, RunFinished
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from gatetui.lab.samples import load_scenarios, materialize
from gatetui.stacks.python.profile import PIP_THERE
from tests.runtime_emulator import Emulator
from tests.runtime_emulator.fixtures import KEY, emulator, running_emulator  # noqa: F401 - a fixture
from tests.support.repos import MakeRepo
from tests.support.runtime import FAST

pytestmark = pytest.mark.xdist_group("runtime_samples")  # one xdist worker gates the samples once

PYTHON_TOOLS = (PIP_THERE,)


def tree(files: dict[str, str]):  # type: ignore[no-untyped-def]
    """An exporter writing `files`, as GitRepo.export writes head's tree."""

    def export(dest: Path) -> None:
        for rel, text in files.items():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_text(text)

    return export


async def opened(backend: RuntimeBackend, files: dict[str, str] | None = None) -> RuntimeWorkspace:
    await backend.preflight(())
    return await backend.open(tree(files or {"hello.txt": "hello\n"}), "run1")


def test_importing_the_backend_does_not_import_the_sdk() -> None:
    """The local backend must never need withruntime: it is loaded on first use."""
    code = "import sys, gatetui.backends.runtime, gatetui.cli.main; print('withruntime' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


# --- the workspace ------------------------------------------------------------


@pytest.mark.sandbox
def test_a_workspace_streams_forks_writes_and_is_deleted(emulator: Emulator) -> None:
    async def scenario() -> None:
        workspace = await opened(RuntimeBackend(settings=FAST))
        copies: list[RuntimeWorkspace] = []
        try:
            await exercise(workspace, copies)
            assert len(emulator.live()) == 2  # the install's sandbox went at the fork
        finally:
            for ws in (*copies, workspace):
                await ws.close()
        await workspace.close()  # twice is harmless
        assert emulator.live() == []

    async def exercise(workspace: RuntimeWorkspace, copies: list[RuntimeWorkspace]) -> None:
        seen: list[str] = []
        command = "cat hello.txt; echo oops >&2; echo again; echo again >&2; exit 3"
        result = await workspace.run(command, timeout=30, on_output=seen.append)
        # stderr joins stdout in the sandbox: the order written is the order read, every time
        assert (result.exit_code, result.ok, "".join(seen)) == (3, False, "hello\noops\nagain\nagain\n")
        assert result.output_tail == "hello\noops\nagain\nagain\n"
        assert result.peak_rss_bytes == 1024 * 2**20  # the sandbox's memory, as Runtime bills it
        busy = await workspace.run("python3 -c 'sum(range(10**7))'", timeout=30, on_output=seen.append)
        assert busy.ok and busy.cpu_seconds > 0.05 and busy.wall_seconds >= busy.cpu_seconds * 0.5
        await workspace.run("echo left > /tmp/left-by-install; echo left > left.txt", timeout=30, on_output=seen.append)
        copies.extend(await workspace.fork(2, lambda dest: (dest.mkdir(), (dest / "hello.txt").write_text("fresh\n"))))
        assert [c.path for c in copies] == [workspace.path, workspace.path]
        with pytest.raises(BackendError, match="nothing runs on the install's machine after its fork"):
            await workspace.run("true", timeout=30, on_output=seen.append)
        await copies[0].write_files({"hello.txt": b"changed\n", "new/file.txt": b"new\n"})
        await copies[1].write_files({"hello.txt": None})
        outputs = []
        for ws in copies:
            lines: list[str] = []
            await ws.run(
                "cat hello.txt new/file.txt left.txt /tmp/left-by-install 2>/dev/null; true",
                timeout=30,
                on_output=lines.append,
            )
            outputs.append("".join(lines))
        assert outputs == ["changed\nnew\n", ""]  # nothing the install left, in the tree or outside it
        report = copies[0].report_path("r.xml")
        await copies[0].run(f"echo '<testsuite/>' > {report}", timeout=30, on_output=seen.append)
        assert await copies[0].read_report("r.xml") == b"<testsuite/>\n"
        assert await copies[1].read_report("r.xml") is None

    asyncio.run(scenario())


@pytest.mark.sandbox
def test_a_command_past_its_limit_is_a_timed_out_result(emulator: Emulator) -> None:
    async def scenario() -> None:
        workspace = await opened(RuntimeBackend(settings=FAST))
        try:
            result = await workspace.run("echo started; sleep 20", timeout=1, on_output=lambda _: None)
        finally:
            await workspace.close()
        assert (result.timed_out, result.exit_code, result.output_tail) == (True, None, "started\n")
        assert result.describe_end().startswith("stopped at its time limit")

    asyncio.run(scenario())


# --- the key ------------------------------------------------------------------


def test_no_key_says_how_to_log_in_and_that_local_needs_nothing(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RUNTIME_API_KEY")
    with pytest.raises(BackendError) as refused:
        asyncio.run(RuntimeBackend().preflight(()))
    line = str(refused.value)
    assert "RUNTIME_API_KEY" in line and "withruntime login" in line and "--backend local" in line
    assert "\n" not in line and refused.value.exit_code == ExitCode.GATE_ERROR


def test_a_refused_key_is_one_line_without_the_key(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = "rtk_wrong_secret_value_1234"
    monkeypatch.setenv("RUNTIME_API_KEY", wrong)
    with pytest.raises(BackendError) as refused:
        asyncio.run(RuntimeBackend().preflight(()))
    line = str(refused.value)
    assert line.startswith("runtime backend: Runtime refused the key (unauthorized 401)")
    assert wrong not in line and "\n" not in line


@pytest.mark.sandbox
def test_commands_in_the_sandbox_never_see_the_key(emulator: Emulator) -> None:
    async def scenario() -> str:
        workspace = await opened(RuntimeBackend(settings=FAST))
        seen: list[str] = []
        try:
            await workspace.run("env", timeout=30, on_output=seen.append, env={"EXTRA": "1"})
        finally:
            await workspace.close()
        return "".join(seen)

    env = asyncio.run(scenario())
    names = {line.split("=", 1)[0] for line in env.splitlines() if "=" in line}
    assert "EXTRA=1" in env.splitlines()
    assert KEY not in env and "RUNTIME_API_KEY" not in env
    # nothing only the gate sets: a run has no cheap sign of the gate to take its right path by
    assert names & {"NO_COLOR", "PYTHONUNBUFFERED"} == set()


# --- faults -------------------------------------------------------------------


@pytest.mark.sandbox
def test_no_capacity_is_waited_out_with_a_countdown(emulator: Emulator) -> None:
    emulator.faults.no_capacity, emulator.faults.capacity_retry_ms = 2, 100
    progress: list[str] = []

    async def scenario() -> None:
        workspace = await opened(RuntimeBackend(settings=FAST, on_progress=progress.append))
        await workspace.close()

    asyncio.run(scenario())
    assert len(progress) == 2
    assert all(
        p.startswith("runtime: no room for a sandbox (no_capacity); trying again in 0.1 s, giving up in ")
        for p in progress
    )


@pytest.mark.sandbox
def test_no_capacity_for_too_long_gives_up_in_one_line(emulator: Emulator) -> None:
    emulator.faults.no_capacity, emulator.faults.capacity_retry_ms = 1000, 200
    progress: list[str] = []
    backend = RuntimeBackend(settings=RuntimeSettings(capacity_wait=1), on_progress=progress.append)
    with pytest.raises(BackendError) as refused:
        asyncio.run(opened(backend))
    assert str(refused.value).startswith(
        "runtime backend: no room for a sandbox while starting the sandbox (no_capacity): No room for a sandbox"
    )
    assert "hint: It frees by itself" in str(refused.value)
    assert len(progress) >= 3


def run_faulted(emulator: Emulator, command: str, timeout: int, **faults: int | str) -> str:
    """What `command` printed in a sandbox opened before `faults` (fields of
    the emulator's Faults) were set; the sandbox is closed however the run
    ends, and a run that does not end well raises (a BackendError, or the
    assertion naming how it ended)."""

    async def scenario() -> str:
        workspace = await opened(RuntimeBackend(settings=FAST))
        for name, value in faults.items():
            setattr(emulator.faults, name, value)
        seen: list[str] = []
        try:
            result = await workspace.run(command, timeout=timeout, on_output=seen.append)
        finally:
            await workspace.close()
        assert result.ok, result.describe_end()
        return "".join(seen)

    return asyncio.run(scenario())


@pytest.mark.sandbox
def test_rate_limits_and_a_passing_503_are_retried(emulator: Emulator) -> None:
    faults = {"rate_limited": 2, "rate_retry_ms": 100, "unavailable": 1, "unavailable_on": ":exec"}
    assert run_faulted(emulator, "echo fine", 30, **faults) == "fine\n"


@pytest.mark.sandbox
def test_a_503_that_does_not_pass_is_an_error_line(emulator: Emulator) -> None:
    with pytest.raises(BackendError) as failed:
        run_faulted(emulator, "echo never", 30, unavailable=10, unavailable_on=":exec")
    assert str(failed.value).startswith(
        "runtime backend: Runtime unavailable while running `echo never` in sandbox sbx_"
    )
    assert "(host_unavailable 503), still after retries: The host is restarting.; hint: Try again" in str(failed.value)
    assert emulator.live() == []


@pytest.mark.sandbox
def test_a_sandbox_that_never_runs_is_deleted_and_said(emulator: Emulator) -> None:
    emulator.faults.never_running = 1
    with pytest.raises(BackendError) as failed:
        asyncio.run(opened(RuntimeBackend(settings=FAST)))
    assert "did not start: still starting after 1 s (it was deleted)" in str(failed.value)
    assert emulator.live() == []


@pytest.mark.sandbox
def test_a_cut_stream_is_followed_and_nothing_is_lost(emulator: Emulator) -> None:
    assert run_faulted(emulator, "echo one; sleep 0.3; echo two", 30, cut_streams=1) == "one\ntwo\n"


@pytest.mark.sandbox
def test_a_lost_stream_is_an_error_and_the_sandbox_still_goes(emulator: Emulator) -> None:
    with pytest.raises(BackendError) as failed:
        run_faulted(emulator, "sleep 30", 60, lose_streams=1)
    assert "lost the connection to Runtime while running `sleep 30`" in str(failed.value)
    assert "keeps closing before it ends" in str(failed.value)
    assert emulator.live() == []


# --- cleanup: cancel, a consumer that stops, crash leftovers --------------------


class ConsumerGaveUp(Exception):
    """An exception raised by whoever reads the gate's events."""


@pytest.fixture
def slow_repo(make_repo: MakeRepo) -> Path:
    """A repo whose install is instant and whose suite sleeps: a run is
    caught with its four sandboxes alive (three runs and old tests; the
    install's is gone by then)."""
    config = 'stack = "python"\ninstall = ["true"]\ntest = "sleep 30"\ntest_paths = ["tests"]\n'
    test = "def test_a():\n    assert True\n"
    return make_repo({"gatetui.toml": config, "tests/test_a.py": test, "a.py": "A = 1\n"}, {"a.py": "A = 2\n"})


@pytest.mark.sandbox
@pytest.mark.parametrize("how", ["cancel", "consumer stops"])
def test_every_sandbox_is_deleted_when_a_run_is_stopped(emulator: Emulator, slow_repo: Path, how: str) -> None:
    plan = make_plan(GateRequest(slow_repo, "main", "agent/x"))

    async def all_four_live(done: Callable[[], bool] = lambda: False, timeout: float = 30.0) -> None:
        """Until the run's four sandboxes are alive (or `done()`)."""
        deadline = time.monotonic() + timeout
        while len(emulator.live()) < 4 and not done():
            if time.monotonic() > deadline:
                pytest.fail(
                    f"the run's 4 sandboxes were never alive at once within {timeout} s: {len(emulator.live())} live"
                )
            await asyncio.sleep(0.05)  # paces the polling; the deadline above bounds it

    async def consume() -> None:
        async for event in run_gate(plan, RuntimeBackend(settings=FAST)):
            if event == CheckStarted(CheckId.RUNS):
                await all_four_live()
                if how == "consumer stops":
                    raise ConsumerGaveUp  # any exception in the consumer (the UI, the CLI)

    async def scenario() -> None:
        task = asyncio.create_task(consume())
        await all_four_live(task.done)
        if how == "cancel":
            task.cancel()
        with pytest.raises((asyncio.CancelledError, ConsumerGaveUp)):
            await task

    asyncio.run(scenario())
    assert emulator.live() == []


@pytest.mark.sandbox
def test_sandboxes_left_by_a_crashed_run_are_deleted_at_start(emulator: Emulator) -> None:
    backend = RuntimeBackend(settings=FAST)
    dead = subprocess.Popen(["true"])
    dead.wait()
    now = str(int(__import__("time").time()))
    client = withruntime.Runtime()
    made = {
        name: client.sandboxes.create(labels={**APP, **labels}).id
        for name, labels in {
            "dead pid": {"host": backend.host, "pid": str(dead.pid), "started": now},
            "stale": {"host": "elsewhere", "pid": "1", "started": "1000"},
            "live pid": {"host": backend.host, "pid": str(os.getppid()), "started": now},
            "other host": {"host": "elsewhere", "pid": str(dead.pid), "started": now},
        }.items()
    }
    other_app = client.sandboxes.create(labels={"app": "someone-else", "pid": str(dead.pid)}).id
    progress: list[str] = []
    backend.on_progress = progress.append
    asyncio.run(backend.preflight(()))
    assert sorted(backend.swept_ids) == sorted([made["dead pid"], made["stale"]])
    assert emulator.live() == sorted([made["live pid"], made["other host"], other_app])
    assert progress == ["runtime: deleted 2 sandbox(es) left by a crashed run"]
    for box in emulator.live():
        client.sandboxes.delete(box)


# --- network ------------------------------------------------------------------


def test_pip_and_npm_hosts_come_from_their_configuration() -> None:
    listing = (
        "global.index-url='https://index.example.invalid/simple'\n"
        "global.extra-index-url='https://extra.example.invalid/simple file:///opt/local/simple'\n"
        "global.find-links='/opt/wheels'\n"
    )
    access = pip_access(listing, ["https://default.example.invalid/simple"])
    assert access.hosts == ("index.example.invalid", "extra.example.invalid")
    assert access.env == {
        "PIP_INDEX_URL": "https://index.example.invalid/simple",
        "PIP_EXTRA_INDEX_URL": "https://extra.example.invalid/simple",
    }
    assert pip_access("", ["https://default.example.invalid/simple", "https://files.example.invalid"]).hosts == (
        "default.example.invalid",
        "files.example.invalid",
    )
    assert pip_access("global.no-index='true'\n", ["https://default.example.invalid/"]).network() == {"internet": False}
    assert npm_access("https://registry.example.invalid/\n").hosts == ("registry.example.invalid",)


def test_go_reaches_the_proxies_its_goproxy_names_and_no_module_host() -> None:
    access = go_access(
        {
            "GOPROXY": "https://goproxy.example.invalid/mod|https://second.example.invalid,direct",
            "GOSUMDB": "sum.example.invalid",
            "GOPRIVATE": "",
            "GOFLAGS": "-insecure",
        }
    )
    assert access.network() == {"internet": True, "allow": ["goproxy.example.invalid", "second.example.invalid"]}
    assert access.env == {
        "GOPROXY": "https://goproxy.example.invalid/mod|https://second.example.invalid,direct",
        "GOSUMDB": "sum.example.invalid",
    }  # go's own settings only, and none empty
    assert access.notes == (
        "GOPROXY's `direct` is not reachable from a Runtime sandbox: modules come from "
        "goproxy.example.invalid, second.example.invalid only",
    )
    for goproxy in ("direct", "off", "", "file:///srv/goproxy"):
        assert (go_access({"GOPROXY": goproxy}).network(), go_access({"GOPROXY": goproxy}).notes) == (
            {"internet": False},
            ("go's module proxy is unknown here (GOPROXY names none): the sandbox gets no network for go",),
        )


@given(
    st.lists(
        st.one_of(
            st.sampled_from(["direct", "off", " ", "file:///x", "not a url"]),
            st.from_regex(r"https?://[a-z]{1,8}\.example\.invalid(:[0-9]{2,5})?(/[a-z]{0,5})?", fullmatch=True),
        ),
        max_size=6,
    ),
    st.lists(st.sampled_from([",", "|"]), min_size=6, max_size=6),
)
def test_go_allows_exactly_the_hosts_of_goproxys_urls(entries: list[str], separators: list[str]) -> None:
    goproxy = "".join(e + sep for e, sep in zip(entries, separators)).rstrip(",|")
    hosts = {e.split("://")[1].split("/")[0].split(":")[0] for e in entries if "://" in e and e.startswith("http")}
    access = go_access({"GOPROXY": goproxy})
    assert set(access.hosts) == hosts
    assert len(access.hosts) == len(hosts)


@pytest.mark.skipif(
    shutil.which("go") is None, reason="go is not installed (Debian: apt-get install golang-go; .ci/run installs it)"
)
@pytest.mark.drives
def test_go_is_asked_with_go_env_from_the_users_environment(tmp_path: Path) -> None:
    """`go env` reads the environment (and go's own env file): what it says is what the sandbox gets."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "GOPROXY": "https://goproxy.example.invalid",
        "GOSUMDB": "off",
        "GOENV": "off",
    }
    access = asyncio.run(index_access(frozenset({"go"}), env))
    assert (access.hosts, access.notes) == (("goproxy.example.invalid",), ())
    assert {k: access.env[k] for k in ("GOPROXY", "GOSUMDB")} == {
        "GOPROXY": "https://goproxy.example.invalid",
        "GOSUMDB": "off",
    }
    assert set(access.env) <= set(GO_SETTINGS)


@pytest.mark.sandbox
def test_the_sandbox_reaches_only_the_configured_index(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # only what the environment says
    monkeypatch.setenv("PIP_INDEX_URL", "https://index.example.invalid/simple")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "https://extra.example.invalid/simple")
    backend = RuntimeBackend(settings=FAST, labels={"repo": "my repo", "branch": "agent/x"})

    async def scenario() -> str:
        await backend.preflight(PYTHON_TOOLS, ("pip",))
        workspace = await backend.open(tree({"a": "b"}), "run7")
        seen: list[str] = []
        try:
            await workspace.run("env | grep ^PIP_ | sort", timeout=30, on_output=seen.append)
        finally:
            await workspace.close()
        return "".join(seen)

    env = asyncio.run(scenario())
    (box,) = emulator.boxes.values()
    assert box.request["network"] == {"internet": True, "allow": ["index.example.invalid", "extra.example.invalid"]}
    assert box.request["onLeaseEnd"] == "delete" and box.request["timeoutSeconds"] == 3600
    assert {k: box.labels[k] for k in ("app", "run", "repo", "branch")} == {
        "app": "gatetui",
        "run": "run7",
        "repo": "my-repo",
        "branch": "agent-x",
    }
    assert "PIP_INDEX_URL=https://index.example.invalid/simple\n" in env
    assert backend.notes[0] == (
        "runtime backend: sandboxes reach index.example.invalid, extra.example.invalid "
        "(the package index from your pip, npm or go setup)"
    )


@pytest.mark.sandbox
def test_a_tool_the_image_lacks_is_named_in_one_line(emulator: Emulator) -> None:
    backend = RuntimeBackend(settings=FAST)

    async def scenario() -> None:
        await backend.preflight((PIP_THERE, ("gatetui-no-such-tool", "-c", "a b")))
        await backend.open(tree({"a": "b"}), "run8")

    with pytest.raises(BackendError) as raised:
        asyncio.run(scenario())
    assert str(raised.value) == (
        "runtime backend: `gatetui-no-such-tool -c 'a b'` does not run in the sandbox "
        "(its image lacks gatetui-no-such-tool): use --backend local"
    )
    assert emulator.live() == []


# --- sample repos: the same verdicts as the local backend -----------------------

SCENARIOS = {s.name: s for s in load_scenarios()}
# Gated through the CLI below: skip_marker in `make test` (a fail, the cheap
# way through every sandbox a gate opens), honest_fix (a pass, mutants and
# all) in `make test-slow`.
THROUGH_THE_CLI = {"skip_marker": (1, "fail"), "honest_fix": (0, "pass")}
# One per kind of verdict and stack, and the network attack, when this file
# runs alone; every other sample with GATETUI_RUNTIME_ALL_SAMPLES=1, as
# `make test-slow` (which CI runs) and `make test-runtime-all` do.
SUBSET = ("loosened_assertion", "node_honest", "attack_network")
ALL = os.environ.get("GATETUI_RUNTIME_ALL_SAMPLES") == "1"
GATED = tuple(n for n in SCENARIOS if n not in THROUGH_THE_CLI) if ALL else SUBSET


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, list[GateEvent]]]:
    root = tmp_path_factory.mktemp("runtime-samples")

    async def gate(name: str, limit: asyncio.Semaphore) -> list[GateEvent]:
        async with limit:
            repo = await asyncio.to_thread(materialize, SCENARIOS[name], root / name)
            scenario = SCENARIOS[name]
            request = GateRequest(
                repo, "main", f"agent/{name}", hidden=scenario.hidden_tests(), random_seed=scenario.random_seed
            )
            plan = await asyncio.to_thread(make_plan, request)
            backend = RuntimeBackend()
            return [e async for e in run_gate(plan, backend)]

    async def every() -> dict[str, list[GateEvent]]:
        limit = asyncio.Semaphore(2)
        return dict(zip(GATED, await asyncio.gather(*(gate(n, limit) for n in GATED))))

    with running_emulator(root / "config"):
        yield asyncio.run(every())


@pytest.mark.sandbox
@pytest.mark.install
@pytest.mark.slow  # in CI with every sample (`make test-slow`); `make test` gates skip_marker through the CLI below
@pytest.mark.parametrize("name", GATED)
def test_samples_get_the_local_backends_verdicts(gated: dict[str, list[GateEvent]], name: str) -> None:
    done = gated[name][-1]
    assert isinstance(done, RunFinished)
    if name.startswith("attack_"):  # the VM is what the agent never touched; at least never a pass
        assert done.verdict.value != "pass"
    got = {r.id.value: r.status.value for r in done.results}
    said = "\n".join(f"{r.id.value}: {r.status.value}: {r.detail}" for r in done.results)
    assert (done.verdict.value, got) == (SCENARIOS[name].verdict, dict(SCENARIOS[name].checks)), said
    assert KEY not in repr(gated[name])


@pytest.mark.sandbox
@pytest.mark.install
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n == "honest_fix" else n for n in THROUGH_THE_CLI]
)
def test_cli_check_with_the_runtime_backend(
    emulator: Emulator, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    repo = materialize(SCENARIOS[name], tmp_path / name)
    code = main(["check", str(repo), "--base", "main", "--head", f"agent/{name}", "--backend", "runtime", "--json"])
    out, err = capsys.readouterr()
    verdict = json.loads(out)
    assert (code, verdict["verdict"], verdict["backend"]) == (*THROUGH_THE_CLI[name], "runtime")
    assert {c["id"]: c["status"] for c in verdict["checks"]} == dict(SCENARIOS[name].checks)
    assert verdict["cost"]["total"]["cpu_minutes"] > 0 and verdict["cost"]["total"]["gib_minutes"] > 0
    # the account's credit as Runtime reports it (the emulator's microdollar strings)
    assert verdict["cost"]["account"] == {"available": 4.99875, "spent": 0.00125, "held": 0.0}
    assert verdict["cost"]["basis"] == "measured by Runtime"
    assert KEY not in out + err


def test_cli_max_sandboxes_below_a_run_is_one_line_and_exit_3(
    emulator: Emulator, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flag reaches the backend and wins over the environment."""
    repo = materialize(SCENARIOS["honest_fix"], tmp_path / "honest_fix")
    monkeypatch.setenv(CAP_VARIABLE, "8")
    code = main(
        [
            "check",
            str(repo),
            "--base",
            "main",
            "--head",
            "agent/honest_fix",
            "--backend",
            "runtime",
            "--max-sandboxes",
            "3",
        ]
    )
    out, err = capsys.readouterr()
    assert (code, out) == (ExitCode.GATE_ERROR, "")
    assert err.strip().splitlines()[-1] == (
        "gatetui: runtime backend: a gate run needs 4 sandboxes at once (one for each test "
        f"run) but the cap on sandboxes at once (--max-sandboxes or {CAP_VARIABLE}) is 3: set it to 4 or more, "
        "or unset it; `--backend local` needs nothing"
    )
    assert emulator.peak_live == 0


def test_cli_max_sandboxes_must_be_a_count(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", ".", "--base", "main", "--head", "x", "--max-sandboxes", "four"])
    assert (code, capsys.readouterr().err) == (
        ExitCode.BAD_INPUT,
        "gatetui: argument --max-sandboxes: not a whole number: 'four' (see `gatetui check --help`)\n",
    )
    code = main(["check", ".", "--base", "main", "--head", "x", "--max-sandboxes", "0"])
    assert (code, capsys.readouterr().err) == (
        ExitCode.BAD_INPUT,
        "gatetui: argument --max-sandboxes: must be 1 or more (see `gatetui check --help`)\n",
    )
