"""The python stack's dependency layer: the pinned third-party set in a venv
of its own, built once per resolved set where no code of head's runs, and
linked under each gate's venv by one .pth line the gate writes (env_check.py
accepts that line and nothing else no RECORD lists).

A .pth line `import site; site.addsitedir(...)` rather than a plain path:
the layer's own .pth files (a namespace package's, setuptools') are read as
they would be in the venv itself.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from gatetui.stacks.base import GateScript, LayerCache, LayerRecipe
from gatetui.stacks.python import env_check, pip_report, scripts
from gatetui.stacks.python.installer import PINNED_CACHE, PIP_INTO, Installer, find_uv

HERE = Path(__file__).parent


def default_installer() -> Installer:
    return Installer(find_uv(), PIP_INTO)


# The interpreter and platform a layer is built for: part of its key.
INTERPRETER = (
    "python3",
    "-I",
    "-S",
    "-c",
    "import sys, sysconfig; print(sys.implementation.cache_tag, "
    "sys.version.split()[0], sysconfig.get_platform(), sys.abiflags)",
)
LINK = GateScript(
    'python3 -I -S -c "$GATE_ENV_CHECK" /dev/null link .venv',
    MappingProxyType({"GATE_ENV_CHECK": scripts.ENV_CHECK, "GATE_LAYER": "{layer}"}),
)


# The layer's bytecode and the standard library's a pytest start imports,
# compiled once with the layer (layer_bytecode.py): every run's pycache
# prefix is its own, so without it each run compiled them all again.
BYTECODE = LayerCache(
    GateScript(
        'python3 -I -S -c "$GATE_LAYER_BYTECODE"',
        MappingProxyType({"GATE_LAYER_BYTECODE": (HERE / "layer_bytecode.py").read_text()}),
    ),
    ".layer-cache",
)


def python_layer(installer: Installer) -> LayerRecipe:
    """The pinned set in a venv of its own (.layer), installed with the
    pinned step's rules: hashes required, a cache and home made for it."""
    pinned = installer.install(
        ".layer", "--no-deps --require-hashes -r /dev/stdin", pip_prefix=PINNED_CACHE + " ", fresh_cache=True
    )
    return LayerRecipe(
        build=("python3 -m venv --without-pip .layer", pinned),
        interpreter=INTERPRETER,
        key=pip_report.layer_key,
        verify=env_check.verify_layer,
        link=LINK,
        link_env="GATE_LAYER",
        cache=BYTECODE,
    )
