"""Head's requirements read from what its pyproject.toml declares
(stacks/python/declared.py), the resolve that starts from them beside head's
build (gate/install/early_layer.py), and the gates that take it."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gatetui.backends.base import CommandResult
from gatetui.backends.isolation import probe_isolation
from gatetui.backends.local import LocalBackend
from gatetui.gate.checks import Verdict
from gatetui.gate.events import OutputChunk, RunFinished
from gatetui.gate.install.early_layer import Early, EarlyResolve
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.git.snapshot import Snapshot
from gatetui.stacks.base import Resolved
from gatetui.stacks.python import own_stub
from gatetui.stacks.python.declared import declared_metadata
from gatetui.stacks.python.installer import find_uv
from gatetui.stacks.python.profile import python_dependencies
from tests.support.gating import gate_events
from tests.support.repos import MakeRepo, git


def declared(text: str) -> tuple[str, str] | None:
    return declared_metadata({"pyproject.toml": text.encode()})


def test_static_requirements_are_written_as_the_build_would_write_them() -> None:
    found = declared(
        '[project]\nname = "My.Pkg"\nversion = "1.2"\ndependencies = ["pydantic>=2", '
        "'tomli; python_version < \"3.11\"']\n[project.optional-dependencies]\n"
        'test = ["pytest", \'hypothesis; sys_platform != "win32"\']\ndocs = []\n'
    )
    assert found == (
        "My.Pkg",
        "Metadata-Version: 2.1\nName: My.Pkg\nVersion: 1.2\nProvides-Extra: docs\n"
        "Provides-Extra: test\nRequires-Dist: pydantic>=2\n"
        'Requires-Dist: tomli; python_version < "3.11"\n'
        'Requires-Dist: pytest ; extra == "test"\n'
        'Requires-Dist: hypothesis ; (sys_platform != "win32") and extra == "test"\n',
    )


def test_a_dynamic_version_is_no_reason_to_wait() -> None:
    assert declared('[project]\nname = "p"\ndynamic = ["version"]\n') == (
        "p",
        "Metadata-Version: 2.1\nName: p\nVersion: 0\n",
    )


@pytest.mark.parametrize(
    "text",
    [
        '[project]\nname = "p"\nversion = "1"\ndynamic = ["dependencies"]\n',  # the build decides them
        '[project]\nname = "p"\nversion = "1"\ndynamic = ["optional-dependencies"]\n',
        '[build-system]\nrequires = ["setuptools"]\n',  # setup.py alone
        '[project]\nversion = "1"\n',  # no name
        '[project]\nname = "p q"\nversion = "1"\n',
        '[project]\nname = "p"\nversion = "1"\ndependencies = ["a\\nRequires-Dist: evil"]\n',  # a header smuggled in
        '[project]\nname = "p"\nversion = "1\\nName: q"\n',
        '[project]\nname = "p"\nversion = "1"\ndependencies = "a"\n',
        '[project]\nname = "p"\nversion = "1"\n[project.optional-dependencies]\n"te st" = ["a"]\n',
        "[project\n",
    ],
)
def test_what_the_build_decides_or_the_gate_cannot_read_safely_waits_for_the_build(text: str) -> None:
    assert declared(text) is None


def test_no_pyproject_waits_for_the_build() -> None:
    assert declared_metadata({}) is None


FIELD = re.compile(r"^(Metadata-Version|Name|Version|Provides-Extra|Requires-Dist): ")


@given(
    st.lists(st.text(max_size=40), max_size=6),
    st.dictionaries(st.text(max_size=10), st.lists(st.text(max_size=40), max_size=3), max_size=3),
)
@example(["0\x0c0"], {})  # a form feed: str.splitlines breaks there too
@example(["a\u20280"], {"x": ["b\x850"]})
def test_whatever_head_declares_the_metadata_holds_one_field_per_line(
    deps: list[str], extras: dict[str, list[str]]
) -> None:
    text = (
        f'[project]\nname = "p"\nversion = "1"\ndependencies = {json.dumps(deps)}\n'
        f"[project.optional-dependencies]\n"
        + "".join(f"{json.dumps(k)} = {json.dumps(v)}\n" for k, v in extras.items())
    )
    found = declared(text)
    if found is None:
        return
    name, metadata = found
    lines = metadata.splitlines()
    assert name == "p" and lines[:3] == ["Metadata-Version: 2.1", "Name: p", "Version: 1"]
    assert all(FIELD.match(line) for line in lines)
    assert len([line for line in lines if line.startswith("Requires-Dist: ")]) == len(deps) + sum(
        len(v) for v in extras.values()
    )


def test_the_stub_is_packed_from_the_declared_metadata(tmp_path: Path) -> None:
    _, metadata = declared('[project]\nname = "my_pkg"\nversion = "3"\ndependencies = ["rich"]\n') or ("", "")
    done = subprocess.run(
        [sys.executable, "-I", "-S", own_stub.__file__, "-", "my-pkg", str(tmp_path)],
        capture_output=True,
        text=True,
        env={"GATE_OWN_METADATA": metadata},
    )
    assert (done.returncode, done.stdout.strip()) == (0, str(tmp_path / "my_pkg-3-py3-none-any.whl"))


def test_a_resolve_for_another_project_than_the_installed_one_is_not_taken() -> None:
    """The installed project is another (by name) than the tree declared:
    the install resolves from the installed one, as before."""
    deps = python_dependencies(Snapshot.of_files({"pyproject.toml": b'[project]\nname = "p"\n'}))

    async def never(*args: object) -> CommandResult:
        raise AssertionError("the resolve was given to the test, not run")

    async def run(own: str) -> Early | None:
        early = EarlyResolve(deps, never, layers=None, files={}, env={})

        async def resolved() -> Early:
            return Early("My.Pkg", Resolved(("rich==1",), ()), None)

        early.task = asyncio.create_task(resolved())
        return await early.taken(own)

    assert asyncio.run(run("my-pkg")) == Early("My.Pkg", Resolved(("rich==1",), ()), None)
    assert asyncio.run(run("other")) is None


STATIC = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "declpkg"\nversion = "0.1"\ndependencies = ["iniconfig"]\n'
        '[project.optional-dependencies]\ntest = ["pytest"]\n[tool.setuptools]\npackages = ["declpkg"]\n'
    ),
    "declpkg/__init__.py": "import iniconfig\n\n\ndef name():\n    return iniconfig.__name__\n",
    "tests/test_name.py": "from declpkg import name\n\n\ndef test_name():\n    assert name() == 'iniconfig'\n",
}
HEAD = {"tests/test_more.py": "from declpkg import name\n\n\ndef test_more():\n    assert name().startswith('ini')\n"}
# The same project, its requirements given by setup.py: only the build knows them.
DYNAMIC = {
    **STATIC,
    "pyproject.toml": STATIC["pyproject.toml"].replace(
        'dependencies = ["iniconfig"]\n[project.optional-dependencies]\ntest = ["pytest"]\n',
        'dynamic = ["dependencies", "optional-dependencies"]\n',
    ),
    "setup.py": "from setuptools import setup\n\nsetup(install_requires=['iniconfig'], "
    "extras_require={'test': ['pytest']})\n",
}
EARLY, AFTER = '"$GATE_OWN_STUB" - declpkg', '"$GATE_OWN_STUB" .venv declpkg'
gate_test = pytest.mark.skipif(
    not probe_isolation().full or find_uv() is None,
    reason="the local backend cannot isolate runs here "
    f"({probe_isolation().reason}) or uv is missing; CI runs as root with uv",
)


def resolves(repo: Path, tmp_path: Path) -> tuple[RunFinished, list[str]]:
    """A gate on a store of its own: its end, and the resolve commands it ran."""
    events = gate_events(repo, LocalBackend(work_root=tmp_path / "work", layers=tmp_path / "layers"))
    said = "".join(e.text for e in events if isinstance(e, OutputChunk) and e.stream == "install")
    assert isinstance(events[-1], RunFinished)
    return events[-1], [line for line in said.splitlines() if line.startswith("$ ") and "GATE_OWN_STUB" in line]


@gate_test
@pytest.mark.sandbox
@pytest.mark.install
def test_a_declared_project_resolves_and_builds_its_layer_beside_heads_build(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    finished, resolved = resolves(make_repo(STATIC, HEAD), tmp_path)
    assert [EARLY in line for line in resolved] == [True]  # no second resolve from the installed project
    assert (finished.verdict, finished.digests.layer_state) == (Verdict.PASS, "miss")


@gate_test
@pytest.mark.sandbox
@pytest.mark.install
def test_a_project_whose_build_decides_its_requirements_resolves_after_it(make_repo: MakeRepo, tmp_path: Path) -> None:
    finished, resolved = resolves(make_repo(DYNAMIC, HEAD), tmp_path)
    assert [AFTER in line for line in resolved] == [True]
    assert (finished.verdict, finished.digests.layer_state) == (Verdict.PASS, "miss")


def test_a_dynamic_version_is_the_one_the_gate_hands_the_build() -> None:
    """pluggy 1.6: with Version 0 the resolve took a pytest old enough to
    accept pluggy 0, which does not import on Python 3.11."""
    text = '[project]\nname = "pluggy"\ndynamic = ["version"]\n[project.optional-dependencies]\ntesting = ["pytest"]\n'
    _, metadata = declared_metadata({"pyproject.toml": text.encode()}, "1.5.0.post0") or ("", "")
    assert metadata.splitlines()[:3] == ["Metadata-Version: 2.1", "Name: pluggy", "Version: 1.5.0.post0"]
    _, static = declared_metadata({"pyproject.toml": b'[project]\nname = "p"\nversion = "2.0"\n'}, "9.9") or ("", "")
    assert static.splitlines()[2] == "Version: 2.0"  # a declared version is the project's own


def test_the_plan_holds_the_version_from_git_the_early_resolve_is_handed(make_repo: MakeRepo) -> None:
    repo = make_repo(
        {
            "pyproject.toml": '[build-system]\nrequires = ["setuptools>=64", "setuptools-scm>=8"]\n'
            'build-backend = "setuptools.build_meta"\n'
            '[project]\nname = "p"\ndynamic = ["version"]\n',
            "p/__init__.py": "",
            "tests/test_p.py": "def test_p():\n    pass\n",
        },
        {"p/core.py": "X = 1\n"},
    )
    git(repo, "tag", "v2.3", "main")
    assert make_plan(GateRequest(repo, "main", "agent/x")).version == "2.3.post0"
