"""Head's builds import the tools they declare from a layer the gate built.

Unit tests read the declaration (the lines reach a resolver as a
requirements file, so anything but a named requirement is refused); the gate
tests build real projects with uv on the local backend: the layer is built
once and used by the next gate, a build that tries to write it is refused
and leaves it as sealed, and a build that asks for a tool it did not declare
builds again the way it always did.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatetui.backends.isolation import probe_isolation
from gatetui.backends.layers import LayerInfo, LayerShelf, layer_manifest
from gatetui.backends.local import LocalBackend
from gatetui.gate.checks import CheckId, Status, Verdict
from gatetui.gate.events import OutputChunk, RunFinished
from gatetui.stacks.python.installer import find_uv
from gatetui.stacks.python.tools_layer import FALLBACK, REQUIREMENT, requires
from tests.support.gating import gate_events
from tests.support.phases import BUILT
from tests.support.repos import MakeRepo


def declared(text: str) -> tuple[str, ...] | None:
    return requires({"pyproject.toml": text.encode()})


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ('[build-system]\nrequires = ["setuptools>=64", "wheel"]\n', ("setuptools>=64", "wheel")),
        ('[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n', ("hatchling",)),
        ('[build-system]\nrequires = ["flit_core >=3.2,<4"]\n', ("flit_core >=3.2,<4",)),
        (
            "[build-system]\nrequires = ['setuptools; python_version >= \"3.8\"']\n",
            ('setuptools; python_version >= "3.8"',),
        ),
        ('[build-system]\nrequires = ["scikit-build-core[pyproject]>=0.5"]\n', ("scikit-build-core[pyproject]>=0.5",)),
        ('[project]\nname = "p"\n', FALLBACK),  # no build system: PEP 517's setuptools
    ],
)
def test_the_declared_build_tools_are_read_as_written(text: str, lines: tuple[str, ...]) -> None:
    assert declared(text) == lines


@pytest.mark.parametrize(
    "text",
    [
        '[build-system]\nrequires = ["setuptools @ https://example.invalid/s.whl"]\n',  # a URL: head's file
        '[build-system]\nrequires = ["-r /etc/passwd"]\n',  # an option of a requirements file
        '[build-system]\nrequires = ["--index-url=http://example.invalid/simple"]\n',
        '[build-system]\nrequires = ["setuptools\\n--extra-index-url http://example.invalid"]\n',
        '[build-system]\nrequires = ["git+https://example.invalid/s.git"]\n',
        "[build-system]\nrequires = []\n",  # nothing to layer
        '[build-system]\nrequires = "setuptools"\n',
        '[build-system]\nbuild-backend = "setuptools.build_meta"\n',  # requires missing: the build says so
        "[build-system]\nrequires = [1]\n",
        "build-system = 3\n",
        "[build-system\n",  # not TOML
    ],
)
def test_a_declaration_a_layer_cannot_stand_for_gives_none(text: str) -> None:
    assert declared(text) is None


def test_no_pyproject_is_setuptools_as_pep_517_says() -> None:
    assert requires({}) == ("setuptools>=40.8.0",)


@given(st.lists(st.text(max_size=60), max_size=8))
def test_whatever_the_lines_what_goes_on_is_only_named_requirements(lines: list[str]) -> None:
    """Any list head writes: what reaches the resolver is None or lines that
    are named requirements, never an option, a URL or a second line."""
    text = "[build-system]\nrequires = " + json.dumps(lines) + "\n"
    found = declared(text)
    if found is None:
        return
    assert all(
        REQUIREMENT.fullmatch(line) and line[0].isalnum() and "@" not in line and "\n" not in line and "\r" not in line
        for line in found
    )
    assert found == tuple(line.strip() for line in lines)


HONEST = {
    "mathlib/core.py": BUILT["mathlib/core.py"] + "\n\ndef sub(a, b):\n    return a - b\n",
    "tests/test_sub.py": "from mathlib.core import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n",
}
# Head's setup.py tries the setuptools it imported, its folder and the layer's
# site-packages; each attempt says what became of it in the build's output.
WRITES_THE_TOOLS = textwrap.dedent("""\
    import os
    import pathlib
    import setuptools
    from setuptools import setup

    module = pathlib.Path(setuptools.__file__)
    attempts = {
        "rewrite": lambda: module.write_text("raise SystemExit('planted')\\n"),
        "plant": lambda: (module.parent.parent / "zz-planted.pth").write_text("import os\\n"),
        "chmod": lambda: os.chmod(module, 0o666),
        "remove": lambda: module.unlink(),
    }
    for name, attempt in attempts.items():
        try:
            attempt()
        except OSError as err:
            print(f"gatetui-test: {name} refused ({type(err).__name__})", flush=True)
        else:
            print(f"gatetui-test: {name} WENT THROUGH", flush=True)
    setup()
    """)
# An in-tree backend that asks for a tool its declaration does not name.
ASKS_FOR_MORE = {
    "pyproject.toml": BUILT["pyproject.toml"].replace(
        'build-backend = "setuptools.build_meta"', 'build-backend = "backend"\nbackend-path = ["_build"]'
    ),
    "_build/backend.py": textwrap.dedent("""\
        from setuptools import build_meta as _setuptools
        from setuptools.build_meta import *  # noqa: F403


        def get_requires_for_build_wheel(config_settings=None):
            return ["flit_core"]


        def get_requires_for_build_editable(config_settings=None):
            return ["flit_core"]


        def build_wheel(*args, **kwargs):
            import flit_core  # noqa: F401
            return _setuptools.build_wheel(*args, **kwargs)


        def build_editable(*args, **kwargs):
            import flit_core  # noqa: F401
            return _setuptools.build_editable(*args, **kwargs)
        """),
}
AGAIN = "gatetui: the build against the build tools layer failed; it runs again in an environment of its own"

gate_test = pytest.mark.skipif(
    not probe_isolation().full or find_uv() is None,
    reason="the local backend cannot isolate runs here "
    f"({probe_isolation().reason}) or uv is missing; CI runs as root with uv",
)


def gated(repo: Path, tmp_path: Path, layers: Path) -> tuple[RunFinished, str]:
    """A gate's end and its install and wheel output, as one text."""
    events = gate_events(repo, LocalBackend(work_root=tmp_path / "work", layers=layers))
    text = "".join(e.text for e in events if isinstance(e, OutputChunk) and e.stream in ("install", "wheel"))
    assert isinstance(events[-1], RunFinished)
    return events[-1], text


def told(said: str) -> str:
    """What the commands wrote, without the lines that show each command."""
    return "\n".join(line for line in said.splitlines() if not line.startswith("$ "))


def install_of(finished: RunFinished) -> tuple[Status, str]:
    result = {r.id: r for r in finished.results}[CheckId.INSTALL]
    return result.status, result.detail


def tools_layers(layers: Path) -> list[LayerInfo]:
    return [layer for layer in LayerShelf(layers).listing() if layer.kind == "build tools"]


@gate_test
@pytest.mark.sandbox
@pytest.mark.install
def test_head_builds_against_a_layer_of_its_build_tools_built_once(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo, layers = make_repo(BUILT, HONEST), tmp_path / "layers"
    first, first_said = gated(repo, tmp_path, layers)
    second, second_said = gated(repo, tmp_path, layers)
    (tools,) = tools_layers(layers)
    assert len(tools.holds) == 1 and tools.holds[0].startswith("setuptools==")
    assert [install_of(first), install_of(second)] == [(Status.PASS, "fresh copy, fresh environment")] * 2
    assert (first.verdict, second.verdict) == (Verdict.PASS, Verdict.PASS)
    assert "$ python3 -m venv --without-pip .tools" in first_said  # built by the first gate
    assert ".tools" not in second_said  # found by the second
    for said in (first_said, second_said):
        commands = [line for line in said.splitlines() if line.startswith("$ ")]
        editable = [line for line in commands if " -e ." in line]
        wheel = [line for line in commands if "build --wheel" in line]
        assert len(editable) == 1 and "--no-build-isolation" in editable[0]
        assert len(wheel) == 1 and "--no-build-isolation --python python3" in wheel[0]
        assert AGAIN not in told(said)


@gate_test
@pytest.mark.sandbox
@pytest.mark.install
def test_a_build_that_writes_into_its_tools_is_refused_and_the_layer_stays_as_sealed(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    repo, layers = make_repo(BUILT, {**HONEST, "setup.py": WRITES_THE_TOOLS}), tmp_path / "layers"
    finished, said = gated(repo, tmp_path, layers)
    (tools,) = tools_layers(layers)
    folder = layers / tools.key
    assert json.loads((folder / "manifest.json").read_text()) == layer_manifest(folder)
    assert "WENT THROUGH" not in said
    for name in ("rewrite", "plant", "chmod", "remove"):  # the wheel's build: uv shows what its backend says
        assert said.count(f"gatetui-test: {name} refused") == 1, name
    assert install_of(finished) == (Status.PASS, "fresh copy, fresh environment")
    assert AGAIN not in told(said)


@gate_test
@pytest.mark.sandbox
@pytest.mark.install
def test_a_build_asking_for_a_tool_it_did_not_declare_builds_again_in_its_own_environment(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    repo = make_repo({**BUILT, **ASKS_FOR_MORE}, HONEST)
    finished, said = gated(repo, tmp_path, tmp_path / "layers")
    assert told(said).count(AGAIN) == 2  # the editable install's build and the wheel's
    assert "No module named 'flit_core'" in told(said)
    assert install_of(finished) == (Status.PASS, "fresh copy, fresh environment")
    assert finished.verdict is Verdict.PASS, [(r.id.value, r.status.value, r.detail) for r in finished.results]
