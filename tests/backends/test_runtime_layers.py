"""Dependency layers on Runtime (backends/runtime_layers.py): a disk snapshot
of a sandbox that built the pinned set and held nothing of head's.

Gated through the emulator with the real SDK: the first gate builds the
layer and keeps it as a snapshot, a second gate (another backend, which
finds it by name through the API) installs no pinned set, and the runs of
both read pytest from the layer; what head's code writes into the layer on
the machine the install moved to never reaches a run.
"""

from __future__ import annotations

import asyncio
import json
import socket
import textwrap
from pathlib import Path

import pytest
import withruntime

from gatetui.backends.base import LayerUnavailable
from gatetui.backends.runtime import RuntimeBackend, RuntimeSettings
from gatetui.backends.runtime_layers import RuntimeLayers
from gatetui.cli.main import main
from gatetui.gate.checks import Verdict
from gatetui.gate.events import OutputChunk, RunFinished
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from tests.runtime_emulator import Emulator
from tests.runtime_emulator.fixtures import emulator  # noqa: F401 - a fixture
from tests.support.go import HAS_GO, LIBRARY, Proxy, go_base, module_and_sum
from tests.support.phases import BASE, statuses
from tests.support.repos import MakeRepo, git
from tests.support.runtime import FAST

pytestmark = [pytest.mark.sandbox, pytest.mark.install]

LAYERED = RuntimeSettings(
    capacity_wait=FAST.capacity_wait, start_seconds=FAST.start_seconds, command_grace=FAST.command_grace, layers=True
)
MARK = "planted_by_a_run.txt"
# A run's test writes into the layer on its own machine (the emulator's
# commands run as root: nothing stops it there); a later gate's runs must
# start from the snapshot, never from what a run left.
PLANTS = textwrap.dedent(f"""\
    import pathlib

    import pytest


    def test_pytest_comes_from_the_layer():
        parts = pathlib.Path(pytest.__file__).parts
        assert ".venv" not in parts
        assert any(part.startswith(".l") and len(part) == 14 for part in parts), parts


    def test_a_run_writes_into_its_own_copy_of_the_layer():
        planted = pathlib.Path(pytest.__file__).parent.parent / {MARK!r}
        planted.write_text("x")
        assert planted.exists()
    """)
FINDS_NOTHING = PLANTS.split("\n\n\ndef test_a_run")[0] + textwrap.dedent(f"""\


    def test_nothing_a_run_wrote_into_the_layer_is_here():
        assert not (pathlib.Path(pytest.__file__).parent.parent / {MARK!r}).exists()
    """)


def gate(repo: Path) -> tuple[RunFinished, str]:
    """A gate on a backend of its own (it knows no layer but what the API
    lists), and what its installs said."""

    async def run() -> tuple[RunFinished, str]:
        plan = await asyncio.to_thread(make_plan, GateRequest(repo, "main", "agent/x"))
        events = [e async for e in run_gate(plan, RuntimeBackend(settings=LAYERED))]
        assert isinstance(events[-1], RunFinished)
        return events[-1], "".join(e.text for e in events if isinstance(e, OutputChunk) and e.stream == "install")

    return asyncio.run(run())


def creates(emulator: Emulator) -> int:
    """Sandboxes created so far (a fork is not a create)."""
    return sum(request == "POST /v1/sandboxes" for request in emulator.requests)


def pinned_installs(said: str) -> int:
    return sum("--require-hashes" in line for line in said.splitlines() if line.startswith("$ "))


@pytest.mark.slow  # in CI; `make test` gates the go modules' snapshot layer below
def test_a_layer_is_kept_as_a_snapshot_and_a_second_gate_installs_no_pinned_set(
    emulator: Emulator, make_repo: MakeRepo
) -> None:
    """The second gate's head checks that what the first gate's runs wrote
    into their copies of the layer is nowhere in its own."""
    repo = make_repo(BASE, {"tests/test_layer.py": PLANTS})
    first, first_said = gate(repo)
    first_creates = creates(emulator)
    git(repo, "checkout", "-q", "agent/x")
    (repo / "tests" / "test_layer.py").write_text(FINDS_NOTHING)
    git(repo, "commit", "-qam", "a head that looks for what the first gate's runs planted")
    git(repo, "checkout", "-q", "main")
    second, second_said = gate(repo)
    # sandboxes made: the install's, the layer's build (a miss), the one the install moves onto,
    # the import check's and the runs' (forked for the rest); the key's interpreter was asked in
    # the install's own sandbox before it ran anything, not in a machine of its own
    assert (first_creates, creates(emulator) - first_creates) == (5, 4)
    assert (first.verdict, second.verdict) == (Verdict.PASS, Verdict.PASS), (statuses(first), statuses(second))
    assert (first.digests.layer_state, second.digests.layer_state) == ("miss", "hit")
    assert first.digests.layer == second.digests.layer != ""
    assert (pinned_installs(first_said), pinned_installs(second_said)) == (1, 0)
    assert (
        "runtime backend: dependency layers are kept as snapshots on your account for 30 days from their "
        "last use (`gatetui cache ls|prune --backend runtime`)"
    ) in first.notes
    kept = [emulator.snaps[taken] for taken in emulator.snapshots()]
    assert [(s.name, s.mode) for s in kept] == [(f"gatetui-layer-{first.digests.layer}", "disk")]
    # the hit kept it its retention days from then: Runtime keeps no last use
    assert [r for r in emulator.requests if r.endswith(":extend")] == [f"POST /v1/snapshots/{kept[0].id}:extend"]


def test_cache_lists_and_prunes_the_accounts_layer_snapshots_only(
    emulator: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    with withruntime.Runtime() as client:
        box = client.sandboxes.create()
        for name in (f"gatetui-layer-{'a' * 64}", "someone-elses"):
            box.snapshot(name=name, mode="disk")
        box.delete()
    assert main(["cache", "ls", "--backend", "runtime"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert (len(lines), lines[1].split()[:2], lines[1].endswith("-  (runtime)")) == (2, ["a" * 12, "-"], True)
    assert main(["cache", "ls", "--backend", "runtime", "--json"]) == 0
    assert [(row["key"], row["where"]) for row in json.loads(capsys.readouterr().out)] == [("a" * 64, "runtime")]
    assert main(["cache", "prune", "--older-than", "1", "--backend", "runtime"]) == 0
    assert capsys.readouterr().out == "removed 0 layers\n"
    assert main(["cache", "prune", "--all", "--backend", "runtime"]) == 0
    assert capsys.readouterr().out == "removed 1 layer\n"
    assert [emulator.snaps[taken].name for taken in emulator.snapshots()] == ["someone-elses"]
    assert main(["cache", "ls", "--backend", "runtime"]) == 0
    assert capsys.readouterr().out == "no dependency layers kept\n"


def test_cache_on_runtime_without_a_good_key_says_so_in_one_line(
    emulator: Emulator, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNTIME_API_KEY", "rtk_not_this_one")
    assert main(["cache", "ls", "--backend", "runtime"]) == 3
    said = capsys.readouterr().err
    assert said.startswith("gatetui: ") and said.count("\n") == 1 and "rtk_not_this_one" not in said, said


@pytest.mark.slow  # in CI
def test_an_account_that_cannot_keep_snapshots_installs_cold_and_says_why(
    emulator: Emulator, make_repo: MakeRepo
) -> None:
    """Snapshots refused (unsupported on the account, a service down): the
    gate goes on, the pinned set installed in its own environment."""
    emulator.faults.unavailable, emulator.faults.unavailable_on = 99, ":snapshot"
    emulator.faults.unavailable_code = "unsupported"  # deliberate: the SDK does not retry it
    done, said = gate(make_repo(BASE, {"tests/test_more.py": "def test_more():\n    assert True\n"}))
    assert (done.verdict, done.digests.layer, emulator.snapshots()) == (Verdict.PASS, "", [])
    (note,) = [n for n in done.notes if n.startswith("no dependency layer")]
    assert "keeping the dependency layer as a snapshot" in note, note
    assert note.endswith("; the pinned set was installed in the gate's own environment"), note
    assert pinned_installs(said) == 2  # the layer's build, then the gate's own


def test_a_refused_snapshot_list_is_a_layer_unavailable_not_a_gate_error(emulator: Emulator) -> None:
    """The store's find, on its own: what layer_steps turns into a cold
    install (the gate above shows that turn for a refused keep)."""
    emulator.faults.unavailable, emulator.faults.unavailable_on = 99, "GET /v1/snapshots"
    emulator.faults.unavailable_code = "unsupported"
    store = RuntimeBackend(settings=LAYERED).layers
    assert isinstance(store, RuntimeLayers)
    with pytest.raises(LayerUnavailable) as refused:
        asyncio.run(store.find("a" * 64))
    assert str(refused.value).startswith("runtime backend: ") and "looking for a dependency layer's snapshot" in str(
        refused.value
    )


def outward_address() -> str | None:
    """This host's address on its way out (no packet is sent): the emulator's
    sandboxes reach the host only through their egress proxy, which go
    leaves out for a loopback address, as every Go program does."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") else address


@pytest.mark.skipif(not HAS_GO, reason="go is not installed (Debian: apt-get install golang-go; .ci/run installs it)")
@pytest.mark.skipif(
    outward_address() is None,
    reason="this host has no address but loopback: the emulator's sandboxes reach no Go proxy here",
)
def test_go_modules_are_a_snapshot_layer_fetched_once_from_the_proxy_goproxy_names(
    emulator: Emulator, make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Go on Runtime: the sandbox reaches the proxy the user's GOPROXY names
    (and only that host), the first gate fetches the module into a layer
    kept as a snapshot, the second fetches nothing and its runs read the
    module from the snapshot, which they cannot change for a later gate."""
    folder, go_sum = module_and_sum(tmp_path / "goproxy")
    served = Proxy(folder, host=outward_address() or "")
    monkeypatch.setenv("GOPROXY", served.url)
    monkeypatch.setenv("GOSUMDB", "off")
    try:
        repo = make_repo(go_base(go_sum), {"proj.go": LIBRARY + "\nfunc Triple() int { return 3 * tiny.Answer() }\n"})
        first, _ = gate(repo)
        fetched = served.zips
        second, _ = gate(repo)
    finally:
        served.close()
    assert (first.verdict, second.verdict) == (Verdict.PASS, Verdict.PASS), (statuses(first), statuses(second))
    assert (first.digests.layer_state, second.digests.layer_state) == ("miss", "hit")
    assert (fetched, served.zips) == (1, 1)  # the second gate fetched nothing
    kept = [emulator.snaps[taken] for taken in emulator.snapshots()]
    assert [s.name for s in kept] == [f"gatetui-layer-{first.digests.layer}"]
    allowed = {
        tuple(box.request["network"]["allow"])
        for box in emulator.boxes.values()
        if (box.request.get("network") or {}).get("internet")
    }
    assert allowed == {(served.url.split("//")[1].split(":")[0],)}
