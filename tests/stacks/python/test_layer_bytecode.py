"""The dependency layer's bytecode (stacks/python/layer_bytecode.py), made
as the layer's build makes it: the script run with the machine's python3 in
a folder holding a real `.layer` venv (pytest and hypothesis, whose pytest
plugin pytest rewrites), then what it kept read back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gatetui.stacks.python.installer import PIP_INTO, Installer, find_uv
from gatetui.stacks.python.layer import BYTECODE

TAG = sys.implementation.cache_tag
SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"

pytestmark = pytest.mark.install
# As the sandbox passes the environment on (local_workspace.scrubbed_env): no PYTHON* variable
SCRUBBED = {k: v for k, v in os.environ.items() if k == "PATH" or k.startswith("PIP_")}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace after the script: `.layer` and `.layer-cache`."""
    work = tmp_path_factory.mktemp("layer-build")
    install = Installer(find_uv(), PIP_INTO).install(".layer", "--quiet pytest hypothesis")
    for command in ("python3 -m venv --without-pip .layer", install):
        subprocess.run(["/bin/sh", "-c", command], cwd=work, check=True, capture_output=True)
    script = BYTECODE.script
    done = subprocess.run(
        ["/bin/sh", "-c", script.command], cwd=work, env={**SCRUBBED, **script.env}, capture_output=True, text=True
    )
    assert (done.returncode, done.stderr) == (0, "")
    return work


def test_every_module_of_the_layer_has_its_bytecode(built: Path) -> None:
    layer, cache = built / ".layer", built / ".layer-cache" / "layer"
    sources = [p.relative_to(layer) for p in (layer / "lib").rglob("*.py")]
    missing = [str(s) for s in sources if not (cache / s.parent / f"{s.stem}.{TAG}.pyc").is_file()]
    assert len(sources) > 500 and missing == []


def test_the_plugins_pytest_rewrites_are_kept_rewritten(built: Path) -> None:
    """What only a pytest start writes: without it every run rewrote them."""
    site = built / ".layer-cache" / "layer" / SITE
    rewritten = sorted(p.name for p in site.glob(f"_hypothesis_pytestplugin.{TAG}-pytest-*.pyc"))
    assert len(rewritten) == 1


def test_only_the_layers_and_the_standard_librarys_bytecode_is_kept(built: Path) -> None:
    cache = built / ".layer-cache"
    stdlib = subprocess.run(
        ["python3", "-I", "-S", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()  # the script's, not this venv's
    assert sorted(p.name for p in cache.iterdir()) == ["layer", "root"]
    assert [
        p
        for p in (cache / "root").rglob("*")
        if p.is_file() and not str(p).startswith(str(cache / "root") + stdlib + "/")
    ] == []
    colorsys = Path(stdlib) / "__pycache__" / f"colorsys.{TAG}.pyc"
    assert (cache / "root" / stdlib.lstrip("/") / f"colorsys.{TAG}.pyc").read_bytes() == colorsys.read_bytes()
