"""The wheel built from head holds the commit's code, or a person is asked.

Unit tests read wheels made here with zipfile (the bytes a build would
write); the gate tests build real wheels with pip, from heads whose build
step changes what the wheel ships while the tree the runs test stays honest.
"""

from __future__ import annotations

import io
import textwrap
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatetui.backends.isolation import probe_isolation
from gatetui.backends.local import LocalBackend
from gatetui.gate.checks import CheckId, Status, Verdict
from gatetui.gate.events import OutputChunk, RunFinished
from gatetui.git.snapshot import Snapshot
from gatetui.stacks.python.profile import build_generated
from gatetui.stacks.python.version_file import VersionFile, render
from gatetui.stacks.python.wheel_tree import describe, wheel_findings
from tests.support.gating import gate_events, gate_locally, shared_layers
from tests.support.phases import BUILT
from tests.support.repos import MakeRepo

CORE = b"def add(a, b):\n    return a + b\n"
TREE = {
    "pyproject.toml": b"[project]\nname = 'p'\n",
    "src/p/__init__.py": b"",
    "src/p/core.py": CORE,
    "tests/test_core.py": b"from p.core import add\n",
}


def wheel(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def found(members: dict[str, bytes], tree: dict[str, bytes] = TREE, generated: tuple[str, ...] = ()) -> list[str]:
    return [str(f) for f in wheel_findings(wheel(members), Snapshot.of_files(tree), generated)]


META = {"p-0.dist-info/METADATA": b"Name: p\n", "p-0.dist-info/RECORD": b""}


def test_a_wheel_of_the_commits_files_is_clean_in_a_src_layout() -> None:
    assert found({"p/__init__.py": b"", "p/core.py": CORE, **META}) == []


def test_a_module_changed_by_the_build_is_named_with_the_commits_path() -> None:
    assert found({"p/__init__.py": b"", "p/core.py": CORE.replace(b"+", b"-"), **META}) == [
        "p/core.py differs from the commit's src/p/core.py"
    ]


def test_a_module_the_commit_does_not_hold_is_named() -> None:
    assert found({"p/__init__.py": b"", "p/core.py": CORE, "p/_speedups.py": b"import os\n"}) == [
        "p/_speedups.py is a file the commit does not hold"
    ]


def test_a_startup_hook_and_compiled_code_are_named() -> None:
    got = found(
        {"p/core.py": CORE, "p/__init__.py": b"", "boost.pth": b"import p._hook\n", "p/_hook.pyc": b"\x00" * 16}
    )
    assert got == [
        "boost.pth is a file the commit does not hold",
        "p/_hook.pyc is compiled code the commit does not hold",
    ]


def test_purelib_data_installs_at_the_root_and_other_data_is_not_code() -> None:
    got = found(
        {
            "p/__init__.py": b"",
            "p-0.data/purelib/p/core.py": b"bad = 1\n",
            "p-0.data/scripts/tool.py": b"print(1)\n",
            "p-0.data/data/share/x.py": b"x\n",
        }
    )
    assert got == ["p/core.py differs from the commit's src/p/core.py"]


def test_a_version_file_the_build_writes_by_design_is_allowed() -> None:
    tree = {**TREE, "pyproject.toml": b'[tool.setuptools_scm]\nversion_file = "src/p/_version.py"\n'}
    generated = build_generated(Snapshot.of_files(tree))
    assert generated == ("src/p/_version.py",)
    assert (
        found({"p/__init__.py": b"", "p/core.py": CORE, "p/_version.py": b"version = '1.0'\n"}, tree, generated) == []
    )


def test_a_committed_version_file_the_build_rewrites_is_allowed_when_it_holds_a_version() -> None:
    """An sdist's tree (or a project that commits it) holds the version file
    the build writes again with another version: the wheel's is the build's."""
    tree = {
        **TREE,
        "pyproject.toml": b'[tool.setuptools_scm]\nwrite_to = "src/p/_version.py"\n',
        "src/p/_version.py": b"version = '1.5.0'\n",
    }
    generated = build_generated(Snapshot.of_files(tree))
    rendered = render(VersionFile("src/p/_version.py", None), "1.4.0.post0")
    assert found({"p/__init__.py": b"", "p/core.py": CORE, "p/_version.py": rendered}, tree, generated) == []


def test_a_version_file_heads_own_build_starts_to_write_is_allowed_when_it_holds_a_version() -> None:
    """humanize 4.11 added hatch-vcs's build hook: base's settings name no
    version file, head's do."""
    tree = {**TREE, "pyproject.toml": b'[tool.hatch.build.hooks.vcs]\nversion-file = "src/p/_version.py"\n'}
    wheel = {"p/__init__.py": b"", "p/core.py": CORE}
    assert found({**wheel, "p/_version.py": b"__version__ = version = '4.11.0'\n"}, tree) == []
    assert found({**wheel, "p/_version.py": b"import os\n"}, tree) == ["p/_version.py is a version file holding code"]


@pytest.mark.parametrize(
    "planted",
    [
        b"__version__ = '1.0'\nimport os\n",
        b"__version__ = '1.0'\ndef f():\n    pass\n",
        b"__version__ = str(1.0)\n",
        b"if TYPE_CHECKING:\n    pass\nelse:\n    import sys\n",
        b"from os import system\n",
    ],
    ids=["import", "def", "call", "else-import", "from-import"],
)
def test_a_version_file_holding_code_is_named(planted: bytes) -> None:
    tree = {**TREE, "pyproject.toml": b'[tool.setuptools_scm]\nversion_file = "src/p/_version.py"\n'}
    generated = build_generated(Snapshot.of_files(tree))
    assert found({"p/__init__.py": b"", "p/core.py": CORE, "p/_version.py": planted}, tree, generated) == [
        "p/_version.py is a version file holding code"
    ]


def test_the_root_is_where_most_of_a_package_lives_not_a_stray_copy() -> None:
    """A second copy of a module elsewhere in the tree (say under vendor/)
    cannot vouch for the wheel's: each package has one root."""
    tree = {**TREE, "vendor/p/core.py": b"def add(a, b):\n    return a - b\n"}
    assert found({"p/__init__.py": b"", "p/core.py": b"def add(a, b):\n    return a - b\n"}, tree) == [
        "p/core.py differs from the commit's src/p/core.py"
    ]


def test_what_is_no_wheel_is_itself_the_finding() -> None:
    got = wheel_findings(b"not a zip", Snapshot.of_files(TREE))
    assert [f.member for f in got] == ["the wheel"]
    assert "could not be read" in got[0].said


def test_the_detail_shows_five_and_counts_the_rest() -> None:
    members = {f"p/m{i}.py": b"x\n" for i in range(8)}
    text = describe(wheel_findings(wheel(members), Snapshot.of_files(TREE)))
    assert text.startswith("the wheel built from head holds code the commit does not: p/m0.py is a file")
    assert "; and 3 more (a build step changed what users would install" in text


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_any_bytes_give_findings_never_an_exception(data: bytes) -> None:
    got = wheel_findings(data, Snapshot.of_files(TREE))
    assert all(f.member and f.said for f in got)


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(st.text(st.sampled_from("pq/_.ay"), min_size=1, max_size=12), st.binary(max_size=50), max_size=6)
)
def test_any_wheel_names_a_finding_only_for_code_the_commit_lacks(members: dict[str, bytes]) -> None:
    tree = {**TREE, **{f"src/{name}": data for name, data in members.items() if name.endswith(".py")}}
    got = wheel_findings(wheel(members), Snapshot.of_files(tree))
    for finding in got:
        assert finding.member.endswith((".py", ".pth", ".pyc")) or finding.member == "the wheel"


# --- real wheels, built by the gate -------------------------------------------

HOOK = textwrap.dedent("""\
    from pathlib import Path
    from setuptools import setup
    from setuptools.command.build_py import build_py


    class Build(build_py):
        def run(self):
            super().run()
            if not self.editable_mode:
                {action}


    setup(cmdclass={{"build_py": Build}})
    """)
ADDS_MODULE = 'Path(self.build_lib, "mathlib", "_fast.py").write_text("def mul(a, b):\\n    return a * b + 1\\n")'
ADDS_PTH = 'Path(self.build_lib, "mathlib_boost.pth").write_text("import os\\n")'
PATCHES_IN_PLACE = (
    'core = Path(self.build_lib, "mathlib", "core.py"); core.write_text(core.read_text().replace("a * b", "a * b + 1"))'
)


def gate(repo: Path, work: Path) -> RunFinished:
    return gate_locally(repo, work)


@pytest.mark.skipif(
    not probe_isolation().full,
    reason=f"the local backend cannot isolate runs here ({probe_isolation().reason}); CI runs as root",
)
@pytest.mark.sandbox
@pytest.mark.install
@pytest.mark.parametrize(
    ("action", "named"),
    [
        (
            f"{ADDS_MODULE}; {ADDS_PTH}",
            [
                "mathlib/_fast.py is a file the commit does not hold",
                "mathlib_boost.pth is a file the commit does not hold",
            ],
        ),
        (PATCHES_IN_PLACE, ["mathlib/core.py differs from the commit's mathlib/core.py"]),
    ],
    ids=["adds a module and a startup hook", "patches a module"],
)
def test_a_build_step_that_changes_the_wheel_asks_for_review(
    make_repo: MakeRepo, tmp_path: Path, action: str, named: list[str]
) -> None:
    repo = make_repo(BUILT, {"setup.py": HOOK.format(action=action)})
    finished = gate(repo, tmp_path / "work")
    install = {r.id: r for r in finished.results}[CheckId.INSTALL]
    assert (install.status, finished.verdict) == (Status.REVIEW, Verdict.REVIEW)
    assert all(words in install.detail for words in named), install.detail


@pytest.mark.skipif(
    not probe_isolation().full,
    reason=f"the local backend cannot isolate runs here ({probe_isolation().reason}); CI runs as root",
)
@pytest.mark.sandbox
@pytest.mark.install
def test_an_honest_build_hook_and_a_src_layout_pass(make_repo: MakeRepo, tmp_path: Path) -> None:
    """A build step that writes no code, and a package under src/."""
    moved = {
        "mathlib/__init__.py": None,
        "mathlib/core.py": None,
        "src/mathlib/__init__.py": "",
        "src/mathlib/core.py": BUILT["mathlib/core.py"].replace("a * b", "b * a"),
        "pyproject.toml": BUILT["pyproject.toml"].replace('packages = ["mathlib"]', 'package-dir = {"" = "src"}'),
        "setup.py": HOOK.format(action='print("building", self.build_lib)'),
    }
    repo = make_repo(BUILT, moved)
    finished = gate(repo, tmp_path / "work")
    install = {r.id: r for r in finished.results}[CheckId.INSTALL]
    assert (install.status, install.detail, finished.verdict) == (
        Status.PASS,
        "fresh copy, fresh environment",
        Verdict.PASS,
    )


WRITES_THE_TREE = textwrap.dedent("""\
    from pathlib import Path
    from setuptools import setup
    from setuptools.command.build_py import build_py


    class Build(build_py):
        def run(self):
            super().run()
            if self.editable_mode:  # the install's build, in the tree the wheel is built from
                Path("mathlib", "_late.py").write_text("def mul(a, b):\\n    return 0\\n")


    setup(cmdclass={"build_py": Build})
    """)


def commands_said(repo: Path, work: Path) -> tuple[RunFinished, list[tuple[str, str]]]:
    """A gate's end, and each command its install and wheel streams ran, in
    the order they began (stream, command line)."""
    events = gate_events(repo, LocalBackend(work_root=work, layers=shared_layers()))
    said = [
        (e.stream, line)
        for e in events
        if isinstance(e, OutputChunk) and e.stream in ("install", "wheel")
        for line in e.text.splitlines()
        if line.startswith("$ ")
    ]
    assert isinstance(events[-1], RunFinished)
    return events[-1], said


@pytest.mark.skipif(
    not probe_isolation().full,
    reason=f"the local backend cannot isolate runs here ({probe_isolation().reason}); CI runs as root",
)
@pytest.mark.sandbox
@pytest.mark.install
def test_the_wheel_is_built_from_the_tree_as_the_commit_made_it_whatever_the_install_writes(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    """The install writes into the tree (an egg-info; here a module) while
    the wheel is built beside it: the wheel's copy of the tree is kept
    before the install's first command, so what the install wrote never
    reaches the wheel. Copied as the build began, the verdict turned on
    timing: skip_at_run_time went `review` once under load."""
    repo = make_repo(BUILT, {"setup.py": WRITES_THE_TREE})
    finished, said = commands_said(repo, tmp_path / "work")
    install = {r.id: r for r in finished.results}[CheckId.INSTALL]
    assert (install.status, install.detail) == (Status.PASS, "fresh copy, fresh environment")
    assert said[0][0] == "wheel" and said[0][1].startswith("$ tar -cf ")  # before the install's first command
    assert said[0][1].endswith("build-source.tar --exclude=./.venv .")
    wheel = [line for stream, line in said if stream == "wheel"]
    assert len(wheel) == 2 and "tar -xf " in wheel[1] and "build-source.tar" in wheel[1]  # built from that copy
