"""The python stack's build tools layer (stacks/build_tools.py).

What head's build imports is what its pyproject.toml's `[build-system]
requires` names (PEP 518), or setuptools where it names no build system
(PEP 517's fallback). The gate reads that table itself, pins the lines
from the index with the user's configuration, and installs them with
their bytecode into a venv of their own (`.tools`, uv's
`--compile-bytecode`, pip's default) where nothing of head's runs. Head's
editable install and its wheel then build without an environment of their
own (`--no-build-isolation`), the layer's site-packages on PYTHONPATH:
head's backend and setup.py run as before, and import tools they can
read and not write.

A build may ask for more than it declares (a backend's
get_requires_for_build_* hook: setuptools' `setup_requires`, an old
setuptools asking for `wheel`). Such a build fails against the layer and
runs again as it always did, in an environment made for it, after one
line in its log saying so: a slower gate, never another verdict.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from gatetui.stacks.base import Resolved
from gatetui.stacks.build_tools import BuildTools
from gatetui.stacks.python import env_check, lock_report, pip_report
from gatetui.stacks.python.declared import pyproject
from gatetui.stacks.python.installer import PINNED_CACHE, Installer
from gatetui.stacks.python.layer import INTERPRETER

# PEP 517: a project without [build-system] builds with setuptools' legacy backend.
FALLBACK = ("setuptools>=40.8.0",)
MAX_LINES, MAX_LINE = 40, 200
# A named requirement and nothing else (PEP 508 without a URL): the lines
# reach the resolver as a requirements file, where `-r`, `--index-url`
# or `name @ url` would be head's choice of what to read or where from.
REQUIREMENT = re.compile(
    r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?\s*(?:\[[A-Za-z0-9._,\s-]*\])?"
    r"\s*(?:[<>=!~(;][^@#\\\n\r]*)?"
)
# The layer on PYTHONPATH: its site-packages, whatever python3's version.
SITE = 'set -- {tools}/lib/python3*/site-packages && [ -d "$1" ] && export PYTHONPATH="$1"'
AGAIN = "echo 'gatetui: the build against the build tools layer failed; it runs again in an environment of its own' >&2"
WHEEL_TREE = 'src="$(mktemp -d)" && out="$(mktemp -d)" && tar -xf {source} -C "$src" && '


def requires(files: Mapping[str, bytes]) -> tuple[str, ...] | None:
    """The requirement lines of the tree's build system; None where a
    layer cannot stand for them (unreadable, none declared, or a line that
    is not a plain named requirement)."""
    raw = files.get("pyproject.toml")
    data = pyproject(raw)
    if raw is None or data is None:
        return FALLBACK if raw is None else None
    system = data.get("build-system")
    if system is None:
        return FALLBACK
    lines = system.get("requires") if isinstance(system, dict) else None
    if not isinstance(lines, list) or not lines or len(lines) > MAX_LINES:
        return None
    if not all(
        isinstance(line, str) and len(line) <= MAX_LINE and REQUIREMENT.fullmatch(line.strip()) for line in lines
    ):
        return None
    return tuple(line.strip() for line in lines)


def against_layer(layered: str, own_way: str, again: str = "") -> str:
    """`layered` with the layer on PYTHONPATH; where it fails, `own_way`
    (after `again`: a fresh copy of what the first try may have written)."""
    return f"if ( {SITE} && {layered} ); then :; else {AGAIN}; {again}{own_way}; fi"


def wheel_command(build: str) -> str:
    """The wheel check's command around `build` (which makes one wheel of
    "$src" in "$out"): the copy unpacked, the wheel kept as {report}."""
    return f'{WHEEL_TREE}{build} && set -- "$out"/*.whl && [ "$#" -eq 1 ] && [ -f "$1" ] && cp "$1" {{report}}'


def python_build_tools(installer: Installer, own_install: str, editable: str) -> BuildTools:
    """The layer's recipe, and the swaps of the editable install
    (`own_install`, with `editable`'s settings) and the wheel's build."""
    pinned = installer.install(
        ".tools",
        "--no-deps --require-hashes -r /dev/stdin",
        pip_prefix=PINNED_CACHE + " ",
        fresh_cache=True,
        uv_args="--compile-bytecode",
    )
    layered_install = installer.install(".venv", f"--no-deps --no-build-isolation {editable} -e .")
    wheel = wheel_command(
        against_layer(
            installer.wheel("$src", "$out", isolated=False), installer.wheel("$src", "$out"), again=WHEEL_TREE
        )
    )
    return BuildTools(
        files=("pyproject.toml",),
        requires=requires,
        resolve="printf '%s\\n' {requirements} | " + installer.compile_lines("{report}"),
        read=read,
        build=("python3 -m venv --without-pip .tools", pinned),
        pinned_command=pinned_command,
        interpreter=INTERPRETER,
        key=key,
        verify=env_check.verify_layer,
        swaps={
            own_install: against_layer(layered_install, own_install),
            wheel_command(installer.wheel("$src", "$out")): wheel,
        },
    )


def read(raw: bytes | None, tree: str) -> Resolved:
    return lock_report.read(raw, tree)


def pinned_command(command: str, resolved: Resolved) -> str:
    return pip_report.heredoc(command, resolved.pinned)


def key(resolved: Resolved, interpreter: str) -> str:
    return pip_report.layer_key(resolved, interpreter, kind="build tools")
