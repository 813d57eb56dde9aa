"""Warm gates for real: the local backend as root, a project whose one
dependency (`tinydep`, a wheel made here) is served from an index on the
host's loopback, pytest from the user's index.

Two gates side by side on a fresh layer store build the layer once (one
misses and builds, the other waits for it and hits) and agree on every
check; a head whose setup.py and tests try to write into the layer is
refused and the layer's digest is unchanged; a layer changed on disk is
thrown away, built again, and said so in the run's notes.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.warm_bench import served
from gatetui.backends.isolation import probe_isolation
from gatetui.backends.layer_files import size_of
from gatetui.backends.layers import LayerInfo, LayerShelf
from gatetui.backends.local import LocalBackend
from gatetui.gate.checks import Verdict
from gatetui.gate.events import RunFinished
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from tests.support.repos import git, write_tree

pytestmark = [
    pytest.mark.skipif(
        not probe_isolation().full, reason=f"the local backend cannot isolate runs here ({probe_isolation().reason})"
    ),
    pytest.mark.xdist_group("warm_gates"),  # one worker: the gates share one built layer
    pytest.mark.sandbox,
    pytest.mark.install,
]
SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
BASE = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "warmpkg"\nversion = "0"\ndependencies = ["tinydep"]\n'
        '[project.optional-dependencies]\ntest = ["pytest"]\n[tool.setuptools]\npackages = ["warmpkg"]\n'
    ),
    "warmpkg/__init__.py": "from tinydep import VALUE\n\n\ndef answer():\n    return VALUE\n",
    "tests/test_answer.py": "from warmpkg import answer\n\n\ndef test_answer():\n    assert answer() == 42\n",
}
HONEST = {
    "warmpkg/__init__.py": BASE["warmpkg/__init__.py"] + "\n\ndef double():\n    return 2 * VALUE\n",
    "tests/test_double.py": "from warmpkg import double\n\n\ndef test_double():\n    assert double() == 84\n",
}
# Head's build tries the store on the host (it fails its own build if a write goes through), and
# plants a link of its own where the gate's goes; its tests try the layer they are shown.
SETUP = """import pathlib
from setuptools import setup

for target in (pathlib.Path({layers!r}) / "planted.txt", pathlib.Path({layer!r}) / {site!r} / "tinydep.py"):
    try:
        target.write_text("VALUE = 0\\n")
    except OSError:
        continue
    raise SystemExit(f"wrote into the layer store at {{target}}")
for site in pathlib.Path(".venv/lib").glob("python*/site-packages"):
    (site / "zz-gatetui-layer.pth").write_text("import site; site.addsitedir('/nowhere')\\n")
setup()
"""
HOSTILE_TEST = """import importlib.util
import os
import pathlib
import sys

import tinydep


def test_the_layer_is_not_the_trees():
    assert ".venv" not in tinydep.__file__


def test_the_layer_cannot_be_written():
    layer = pathlib.Path(tinydep.__file__)
    for attempt in (lambda: layer.write_text("VALUE = 0\\n"), lambda: (layer.parent / "planted.py").write_text("x"),
                    lambda: os.chmod(layer, 0o666), lambda: layer.unlink()):
        try:
            attempt()
        except OSError:
            continue
        raise AssertionError(f"changed the layer at {layer}")


def test_the_layers_bytecode_was_read_and_cannot_be_written():
    cached = pathlib.Path(importlib.util.cache_from_source(tinydep.__file__))
    assert sys.pycache_prefix and str(cached).startswith(sys.pycache_prefix)
    assert cached.stat().st_uid != os.getuid()  # compiled with the layer, not by this run
    for attempt in (lambda: cached.write_bytes(b"planted"), lambda: (cached.parent / "x.pyc").write_bytes(b"x"),
                    lambda: cached.unlink()):
        try:
            attempt()
        except OSError:
            continue
        raise AssertionError(f"changed the layer's bytecode at {cached}")


def test_the_standard_librarys_bytecode_was_read_too():
    import argparse  # imported by every pytest start: compiled with the layer

    cached = pathlib.Path(argparse.__cached__)
    assert str(cached).startswith(sys.pycache_prefix)
    assert cached.stat().st_uid != os.getuid()


def test_a_standard_module_no_start_imports_has_the_interpreters_own_bytecode():
    import colorsys  # neither pytest nor tinydep imports it: copied from the interpreter, not compiled

    cached = pathlib.Path(colorsys.__cached__)
    assert str(cached).startswith(sys.pycache_prefix)
    assert cached.read_bytes() == (pathlib.Path(colorsys.__file__).parent / "__pycache__" / cached.name).read_bytes()
"""


def tinydep_wheel() -> tuple[str, bytes]:
    files = {
        "tinydep.py": b"VALUE = 42\n",
        "tinydep-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinydep\nVersion: 1.0\n",
        "tinydep-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = (
        "".join(
            f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip('=')},"
            f"{len(data)}\n"
            for name, data in files.items()
        )
        + "tinydep-1.0.dist-info/RECORD,,\n"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in {**files, "tinydep-1.0.dist-info/RECORD": record.encode()}.items():
            archive.writestr(name, data)
    return "tinydep-1.0-py3-none-any.whl", buffer.getvalue()


@dataclass(frozen=True)
class Gated:
    finished: RunFinished
    statuses: dict[str, str]


@dataclass(frozen=True)
class Warm:
    layers: Path
    work: Path
    honest: Path  # the repo, agent/x honest
    race: tuple[Gated, Gated]


def make_repo(root: Path, head: dict[str, str]) -> Path:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write_tree(root, BASE)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "agent/x")
    write_tree(root, head)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "head")
    git(root, "checkout", "-q", "main")
    return root


def gate(repo: Path, layers: Path, work: Path) -> Gated:
    async def run() -> RunFinished:
        plan = await asyncio.to_thread(make_plan, GateRequest(repo, "main", "agent/x"))
        async for event in run_gate(plan, LocalBackend(work_root=work, layers=layers)):
            if isinstance(event, RunFinished):
                return event
        raise AssertionError("the gate ended without a verdict")

    finished = asyncio.run(run())
    return Gated(finished, {r.id.value: r.status.value for r in finished.results})


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """tinydep's wheel served on the host's loopback as a simple index (the
    install's network), besides the user's own."""
    folder = tmp_path_factory.mktemp("wheelhouse")
    name, data = tinydep_wheel()
    (folder / name).write_bytes(data)
    with served(folder) as url:  # the bench's loopback wheelhouse
        yield url


@pytest.fixture(scope="module")
def warm(wheelhouse: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Warm]:
    """A fresh store, and two honest gates started side by side on it."""
    root = tmp_path_factory.mktemp("warm")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PIP_EXTRA_INDEX_URL", wheelhouse)
        repo = make_repo(root / "honest", HONEST)
        with ThreadPoolExecutor(2) as pool:
            first, second = pool.map(lambda _: gate(repo, root / "layers", root / "work"), range(2))
        yield Warm(root / "layers", root / "work", repo, (first, second))


def test_two_gates_at_once_build_one_layer_and_agree(warm: Warm) -> None:
    first, second = warm.race
    states = sorted(g.finished.digests.layer_state for g in warm.race)
    assert states == ["hit", "miss"]
    assert first.finished.digests.layer == second.finished.digests.layer
    assert [layer.key for layer in dependency_layers(warm.layers)] == [first.finished.digests.layer]
    assert (first.finished.verdict, first.statuses) == (second.finished.verdict, second.statuses)
    assert first.finished.verdict is Verdict.PASS


def test_the_gate_that_found_the_layer_is_told_what_building_it_cost(warm: Warm) -> None:
    saved = {g.finished.digests.layer_state: g.finished.cost.saved for g in warm.race}
    key = warm.race[0].finished.digests.layer
    built = json.loads((warm.layers / key / "info.json").read_text())["build"]
    assert (saved["miss"], list(saved["hit"])) == ({}, ["install"])
    assert (saved["hit"]["install"].wall_seconds, saved["hit"]["install"].cpu_seconds) == (
        built["wall_seconds"],
        built["cpu_seconds"],
    )
    assert built["cpu_seconds"] > 0.1  # a venv, an install and the bytecode: measured, not zero


def test_a_layers_size_counts_its_bytecode(warm: Warm) -> None:
    """`gatetui cache ls` and the size cap count the whole layer."""
    (layer,) = dependency_layers(warm.layers)
    folder = warm.layers / layer.key
    assert size_of(folder / "cache") > 0
    assert layer.size == size_of(folder / "env") + size_of(folder / "cache")


def dependency_layers(layers: Path) -> list[LayerInfo]:
    """The store's dependency layers (the build tools' layer beside them is
    tests/stacks/python/test_build_tools.py's)."""
    return [layer for layer in LayerShelf(layers).listing() if layer.kind == "dependencies"]


def hostile(warm: Warm, wheelhouse: str, tmp_path: Path, files: dict[str, str]) -> tuple[Gated, Path]:
    """A head of `files` gated on the store the race built, the layer's
    digest and content the same after; the gate and the layer's folder."""
    (before,) = dependency_layers(warm.layers)
    layer = warm.layers / before.key / "env"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PIP_EXTRA_INDEX_URL", wheelhouse)
        repo = make_repo(
            tmp_path / "hostile",
            {path: text.format(layers=str(warm.layers), layer=str(layer), site=SITE) for path, text in files.items()},
        )
        gated = gate(repo, warm.layers, warm.work)
    (after,) = dependency_layers(warm.layers)
    assert (after.key, after.digest) == (before.key, before.digest)
    assert (layer / SITE / "tinydep.py").read_text() == "VALUE = 42\n"
    return gated, layer


def test_a_build_writing_into_the_layer_is_refused_and_the_layer_unchanged(
    warm: Warm, wheelhouse: str, tmp_path: Path
) -> None:
    gated, _ = hostile(warm, wheelhouse, tmp_path, {"setup.py": SETUP})
    install = gated.finished.results[0]
    assert (install.id.value, install.status.value) == ("install", "fail")
    assert install.detail.startswith(
        "the install left files no installed distribution accounts for: zz-gatetui-layer.pth"
    )
    assert not (warm.layers / "planted.txt").exists()


def test_tests_writing_into_the_layer_are_refused_and_the_layer_unchanged(
    warm: Warm, wheelhouse: str, tmp_path: Path
) -> None:
    gated, layer = hostile(
        warm, wheelhouse, tmp_path, {"tests/test_hostile.py": HOSTILE_TEST.replace("{", "{{").replace("}", "}}")}
    )
    assert (gated.finished.verdict, gated.statuses["runs"], gated.finished.digests.layer_state) == (
        Verdict.PASS,
        "pass",
        "hit",
    )
    assert gated.finished.digests.layer == layer.parent.name


def test_a_changed_layer_is_thrown_away_rebuilt_and_said(
    warm: Warm, wheelhouse: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layers = tmp_path / "layers"
    subprocess.run(["cp", "-a", str(warm.layers), str(layers)], check=True)
    (kept,) = dependency_layers(layers)
    target = layers / kept.key / "env" / SITE / "tinydep.py"
    target.chmod(0o644)
    target.write_text("VALUE = 0\n")
    monkeypatch.setenv("PIP_FIND_LINKS", wheelhouse)
    again = gate(warm.honest, layers, warm.work)
    assert (again.finished.verdict, again.finished.digests.layer_state) == (Verdict.PASS, "rebuilt")
    assert [note for note in again.finished.notes if "manifest" in note] == [
        f"dependency layer {kept.key[:12]} no longer matched its manifest ({SITE}/tinydep.py): "
        "thrown away and built again"
    ]
    assert target.read_text() == "VALUE = 42\n"
    assert [layer.key for layer in dependency_layers(layers)] == [kept.key]
