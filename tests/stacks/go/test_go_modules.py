"""Go's modules from a layer keyed by go.mod and go.sum (stacks/go/modules.py):
fetched once per lock, shown read-only to the install and the runs.

The gates are real: a module (`example.com/tiny`) served by a Go module
proxy on the host's loopback, go.sum made by go itself, two gates on one
store (the second fetches nothing), and a head whose test tries to write
the module cache it is shown."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gatetui.backends.isolation import probe_isolation
from gatetui.backends.layers import LayerShelf
from gatetui.backends.local import LocalBackend
from gatetui.gate.checks import Verdict
from gatetui.gate.events import RunFinished
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from gatetui.stacks.go.modules import TOOLCHAIN, layer_key
from tests.support.go import GO_MOD, HAS_GO, LIBRARY, Proxy, go_base, module_and_sum
from tests.support.repos import MakeRepo

GO_SUM = b"example.com/tiny v1.0.0 h1:abc=\nexample.com/tiny v1.0.0/go.mod h1:def=\n"


def test_the_key_is_both_files_and_the_toolchain() -> None:
    key = layer_key({"go.mod": GO_MOD, "go.sum": GO_SUM}, "go1.19 linux amd64")
    assert key is not None and len(key) == 64
    assert layer_key({"go.mod": GO_MOD, "go.sum": GO_SUM}, "go1.19 linux amd64\n") == key
    assert layer_key({"go.mod": GO_MOD + b"\n", "go.sum": GO_SUM}, "go1.19 linux amd64") != key
    assert layer_key({"go.mod": GO_MOD, "go.sum": GO_SUM + b"x v1 h1:y=\n"}, "go1.19 linux amd64") != key
    assert layer_key({"go.mod": GO_MOD, "go.sum": GO_SUM}, "go1.20 linux amd64") != key


@pytest.mark.parametrize("files", [{"go.mod": GO_MOD}, {"go.mod": GO_MOD, "go.sum": b"\n"}, {"go.sum": GO_SUM}])
def test_a_tree_that_pins_no_module_gets_no_layer(files: dict[str, bytes]) -> None:
    assert layer_key(files, "go1.19 linux amd64") is None


# --- real gates --------------------------------------------------------------------------------


def needs_go_gates(test: Callable[..., None]) -> Callable[..., None]:
    for mark in (
        pytest.mark.skipif(
            not HAS_GO, reason="go is not installed (Debian: apt-get install golang-go; .ci/run installs it)"
        ),
        pytest.mark.skipif(
            not probe_isolation().full,
            reason=f"the local backend cannot isolate runs here ({probe_isolation().reason})",
        ),
        pytest.mark.sandbox,
        pytest.mark.install,
    ):
        test = mark(test)
    return test


WRITER = """package proj

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTheModulesCannotBeWritten(t *testing.T) {
	cache := os.Getenv("GOMODCACHE")
	source := filepath.Join(cache, "example.com", "tiny@v1.0.0", "tiny.go")
	if _, err := os.Stat(source); err != nil {
		t.Fatalf("the module is not where GOMODCACHE says: %v", err)
	}
	if err := os.WriteFile(source, []byte("package tiny\\n\\nfunc Answer() int { return 0 }\\n"), 0o644); err == nil {
		t.Fatal("rewrote the module in the layer")
	}
	if err := os.WriteFile(filepath.Join(cache, "planted.txt"), []byte("x"), 0o644); err == nil {
		t.Fatal("wrote into the layer")
	}
}
"""


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Proxy, bytes]]:
    """The proxy on the host's loopback, and go.sum."""
    folder, go_sum = module_and_sum(tmp_path_factory.mktemp("goproxy"))
    served = Proxy(folder)
    try:
        yield served, go_sum
    finally:
        served.close()


def gate(repo: Path, layers: Path, work: Path) -> RunFinished:
    async def run() -> RunFinished:
        plan = await asyncio.to_thread(make_plan, GateRequest(repo, "main", "agent/x"))
        events = [e async for e in run_gate(plan, LocalBackend(work_root=work, layers=layers))]
        assert isinstance(events[-1], RunFinished)
        return events[-1]

    return asyncio.run(run())


def statuses(done: RunFinished) -> dict[str, str]:
    return {r.id.value: r.status.value for r in done.results}


@needs_go_gates
def test_the_modules_are_fetched_once_and_every_run_reads_them_from_the_layer(
    proxy: tuple[Proxy, bytes], make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two gates on one store: the first fetches the module into the layer,
    the second fetches nothing; in both the runs read it from the layer
    and cannot write it (writer_test.go), and the layer is as built."""
    served, go_sum = proxy
    monkeypatch.setenv("GOPROXY", served.url)
    repo = make_repo(
        go_base(go_sum),
        {"proj.go": LIBRARY + "\nfunc Triple() int { return 3 * tiny.Answer() }\n", "writer_test.go": WRITER},
    )
    before = served.zips  # the module's other tests fetch from the same proxy
    first = gate(repo, tmp_path / "layers", tmp_path / "work")
    (built,) = LayerShelf(tmp_path / "layers").listing()
    fetched = served.zips - before
    second = gate(repo, tmp_path / "layers", tmp_path / "work")
    assert (first.verdict, second.verdict) == (Verdict.PASS, Verdict.PASS), (statuses(first), statuses(second))
    assert (first.digests.layer_state, second.digests.layer_state) == ("miss", "hit")
    assert first.digests.layer == second.digests.layer == built.key
    assert (fetched, served.zips - before) == (1, 1)  # the second gate fetched nothing
    (kept,) = LayerShelf(tmp_path / "layers").listing()  # a hit: checked against its manifest at that use
    assert (kept.key, kept.digest, kept.built, kept.holds) == (
        built.key,
        built.digest,
        built.built,
        ("go.mod", "go.sum"),
    )


@needs_go_gates
def test_a_lock_the_layer_cannot_be_fetched_from_leaves_the_install_to_fetch_and_says_so(
    proxy: tuple[Proxy, bytes], make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """go.mod replaces a module with a folder of the tree: the layer's
    workspace holds only go.mod and go.sum, so its fetch fails; the gate
    goes on without a layer (its own fetch, in the install) and says why."""
    served, go_sum = proxy
    monkeypatch.setenv("GOPROXY", served.url)
    repo = make_repo(
        go_base(go_sum),
        {
            "go.mod": GO_MOD.decode() + "\nrequire example.com/other v0.0.0\n\nreplace example.com/other => ./other\n",
            "other/go.mod": "module example.com/other\n\ngo 1.19\n",
            "other/other.go": "package other\n\nfunc One() int { return 1 }\n",
            "proj.go": LIBRARY.replace(
                'import "example.com/tiny"', 'import (\n\t"example.com/other"\n\t"example.com/tiny"\n)'
            )
            + "\nfunc Plus() int { return tiny.Answer() + other.One() }\n",
        },
    )
    done = gate(repo, tmp_path / "layers", tmp_path / "work")
    assert (done.verdict, done.digests.layer, LayerShelf(tmp_path / "layers").listing()) == (Verdict.PASS, "", [])
    (note,) = [n for n in done.notes if n.startswith("no dependency layer")]
    assert note.startswith(
        "no dependency layer for go.mod, go.sum: exit code 1: go: example.com/other@v0.0.0 "
        "(replaced by ./other): reading other/go.mod: open "
    )
    assert note.endswith("no such file or directory; the install fetched for itself")


@needs_go_gates
def test_a_module_that_does_not_match_go_sum_is_never_layered_and_fails_the_install(
    proxy: tuple[Proxy, bytes], make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the index serves is checked against go.sum by go itself, in the
    layer's fetch and in the install's: a go.sum whose hash for the module
    is not what the proxy serves (a module swapped at the index, or a head
    that edited go.sum) gets no layer and no pass."""
    served, go_sum = proxy
    monkeypatch.setenv("GOPROXY", served.url)
    good = go_sum.split(b"\n")[0].split(b" h1:")[1]
    bad = go_sum.replace(good, b"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
    repo = make_repo(go_base(go_sum), {"go.sum": bad.decode()})
    done = gate(repo, repo.parent / "layers", repo.parent / "work")
    assert (done.verdict, statuses(done)["install"], done.digests.layer) == (Verdict.FAIL, "fail", "")
    toolchain = subprocess.run(["go", *TOOLCHAIN[1:]], capture_output=True, text=True, check=True).stdout
    # the only layer is base's (its install tells whose failure it is); head's lock has none
    assert [layer.key for layer in LayerShelf(repo.parent / "layers").listing()] == [
        layer_key({"go.mod": GO_MOD, "go.sum": go_sum}, toolchain)
    ]
    (note,) = [n for n in done.notes if n.startswith("no dependency layer")]
    # go's own words: the line that names the module and the mismatch
    assert note.startswith("no dependency layer for go.mod, go.sum: exit code 1: verifying example.com/tiny@v1.0.0")
    assert "checksum mismatch" in note
    assert note.endswith("; the install fetched for itself")
