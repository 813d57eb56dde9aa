"""Head's own project never comes from the index (make eval: click 8.1.7 to 8.1.8).

click's requirements/dev.txt pins `click==8.1.7`, the project itself; the
index's 8.1.7 was resolved, layered, and shadowed head's tree, so 8.1.8's
new tests ran against 8.1.7. The resolve reads its requirements with the
project left out (own_requirements.py, own_stub.py's METADATA); a resolver
that still gives a release of it has it dropped from the pinned set, said
in the notes; and the environment check refuses two distributions of one
name where a run would import from both. Here the names one by one, then a
real gate whose index serves an old release of the project.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.warm_bench import served
from gatetui.backends.isolation import probe_isolation
from gatetui.backends.local import LocalBackend
from gatetui.gate.events import RunFinished
from gatetui.gate.install.steps import _note_dropped
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from gatetui.stacks.base import Resolved
from gatetui.stacks.python import env_check, lock_report, own_requirements, pip_report, scripts
from gatetui.stacks.python.own_stub import without_own
from tests.support.repos import MakeRepo, write_tree

HASH = "a" * 64
SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
TREE = "/tmp/w/ws"


@pytest.mark.parametrize(
    ("line", "stays"),
    [
        ("click==8.1.7", ""),
        ("  click  # via pip-tools", ""),
        ("Click==8.1.7 --hash=sha256:" + HASH, ""),
        ("click @ https://files.invalid/click-8.1.7-py3-none-any.whl", ""),
        ("click ; python_version < '3.8'", ""),
        ("CLICK[Test, docs]>=8 ; python_version >= '3.8'", "CLICK[Test,docs] ; python_version >= '3.8'"),
        ("My.Project[x]==1 --hash=sha256:" + HASH, None),  # another project's name
        ("click-plugins==1.1", None),
        ("clicker", None),
        ("click/", None),  # a folder of that name
        ("-e .", None),
        ("-r click.txt", None),
    ],
)
def test_a_requirement_naming_the_project_itself_is_left_out_or_keeps_its_extras(line: str, stays: str | None) -> None:
    assert own_requirements.names_own(line, "click") == stays


@given(
    st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
        max_size=40,
    ).map(lambda tail: f"click{tail}")
)
def test_what_stays_of_a_line_is_itself_again(line: str) -> None:
    """Whatever head writes after the name: what stays names the project
    with no version or URL, and is kept as it is when read again."""
    stays = own_requirements.names_own(line, "click")
    assert stays is None or stays == "" or own_requirements.names_own(stays, "click") == stays


def test_the_names_compare_as_the_index_compares_them() -> None:
    assert own_requirements.names_own("My.Project==1", "my_project") == ""
    assert own_requirements.names_own("my--project[a]", "MY.PROJECT") == "my--project[a]"


def copy_requirements(tree: Path, out: Path, files: list[str], lines: list[str]) -> tuple[dict[str, str], str]:
    """own_requirements.py run as the resolve runs it (stdlib only, in the
    tree): every file it wrote, by its path under `out`, and what it said."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", own_requirements.__file__, "click", str(out), *files, "--", *lines],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return {p.relative_to(out).as_posix(): p.read_text() for p in sorted(out.rglob("*")) if p.is_file()}, done.stderr


def test_requirement_files_are_copied_without_the_project_nested_ones_too(tmp_path: Path) -> None:
    tree, out = tmp_path / "tree", tmp_path / "out"
    (tmp_path / "outside.txt").write_text("click==1\n")
    write_tree(
        tree,
        {
            "requirements/dev.txt": (
                "# pip-compile output\nclick==8.1.7 \\\n    --hash=sha256:" + HASH + "\n"
                "    # via pip-tools\n-r tests.txt\n-c ../constraints.txt\n./libs/helper\n"
                "pip-tools==7.4.1\n-r ../../outside.txt\n"
            ),
            "requirements/tests.txt": "Click[testing]==8.1.7\npytest==8.3.4\n",
            "constraints.txt": "click<9\nattrs<30\n",
        },
    )
    files, said = copy_requirements(
        tree, out, ["requirements/dev.txt"], ["-r", "requirements/tests.txt", "click", "pytest>=8"]
    )
    assert files == {
        "lines.txt": f"-r {out}/tree/requirements/tests.txt\npytest>=8\n",
        "tree/constraints.txt": "attrs<30\n",
        "tree/requirements/dev.txt": (
            f"# pip-compile output\n    # via pip-tools\n-r {out}/tree/requirements/tests.txt\n"
            f"-c {out}/tree/constraints.txt\n./libs/helper\npip-tools==7.4.1\n"
            f"-r {tmp_path}/outside.txt\n"
        ),
        "tree/requirements/tests.txt": "Click[testing]\npytest==8.3.4\n",
    }
    assert said.splitlines() == [
        f"gatetui: requirements/dev.txt: click==8.1.7     --hash=sha256:{HASH} names the project itself "
        "(its tree is installed): left out",
        "gatetui: requirements/tests.txt: Click[testing]==8.1.7 names the project itself (its tree is installed): "
        "kept as Click[testing]",
        "gatetui: constraints.txt: click<9 names the project itself (its tree is installed): left out",
        "gatetui: the declared requirements: click names the project itself (its tree is installed): left out",
    ]


def test_a_file_the_copy_cannot_take_is_read_where_it_is(tmp_path: Path) -> None:
    """Missing at head, or outside the tree: the resolver reads it as it
    did before (and says so if it is missing)."""
    tree, out = tmp_path / "tree", tmp_path / "out"
    write_tree(tree, {"setup.py": ""})
    (tree / "requirements-test.txt").symlink_to(tmp_path / "elsewhere.txt")
    files, said = copy_requirements(tree, out, ["requirements-dev.txt", "requirements-test.txt"], [])
    assert files == {
        "lines.txt": "",
        "tree/requirements-dev.txt": f"-r {tree}/requirements-dev.txt\n",
        "tree/requirements-test.txt": f"-r {tree}/requirements-test.txt\n",
    }
    assert said == ""


def test_the_stubs_metadata_asks_for_no_release_of_the_project() -> None:
    """A test extra that pins the project itself: uv would have to take a
    release of it beside the stub; the stub asks for its extras alone."""
    head = b"Metadata-Version: 2.1\nName: selfpin\nVersion: 2.0\nProvides-Extra: test\n"
    metadata = head + (
        b'Requires-Dist: selfpin==1.0 ; extra == "test"\nRequires-Dist: SelfPin[fast]>=1 ; extra == "test"\n'
        b'Requires-Dist: self-pin==3 ; extra == "test"\nRequires-Dist: pytest ; extra == "test"\n'
        b"\nselfpin==1.0 in the description stays\n"
    )
    assert without_own(metadata, "selfpin") == head + (
        b'Requires-Dist: SelfPin[fast] ; extra == "test"\n'
        b'Requires-Dist: self-pin==3 ; extra == "test"\nRequires-Dist: pytest ; extra == "test"\n'
        b"\nselfpin==1.0 in the description stays\n"
    )


def test_the_install_says_which_release_it_left_out() -> None:
    notes: list[str] = []
    _note_dropped(notes, Resolved(pinned=(), local=(), dropped=("Click 8.1.7",)))
    assert notes == [
        "not installed: Click 8.1.7 from the index, a release of head's own project that a requirement "
        "named (it would shadow head's tree, which is installed)"
    ]


def pip_item(name: str, version: str) -> dict[str, object]:
    return {
        "metadata": {"name": name, "version": version},
        "download_info": {"url": f"https://i.invalid/{name}.whl", "archive_info": {"hashes": {"sha256": HASH}}},
    }


def test_a_release_of_the_project_pip_resolved_is_never_pinned_nor_its_stub() -> None:
    stub = {
        "metadata": {"name": "click", "version": "8.1.8"},
        "is_direct": True,
        "download_info": {
            "url": "file:///tmp/s/click-8.1.8-py3-none-any.whl",
            "archive_info": {"hashes": {"sha256": HASH}},
        },
    }
    raw = json.dumps(
        {"version": "1", "install": [pip_item("Click", "8.1.7"), pip_item("pytest", "8.3.4"), stub]}
    ).encode()
    assert lock_report.read(raw, TREE, "click") == Resolved(
        pinned=(f"pytest==8.3.4 --hash=sha256:{HASH}",), local=(), dropped=("Click 8.1.7",)
    )
    assert pip_report.split(raw, TREE).pinned == (
        f"Click==8.1.7 --hash=sha256:{HASH}",
        f"click==8.1.8 --hash=sha256:{HASH}",
        f"pytest==8.3.4 --hash=sha256:{HASH}",
    )  # no project named


def test_a_release_of_the_project_in_uvs_lock_is_dropped_and_named_the_stub_silently() -> None:
    raw = (
        f'lock-version = "1.0"\n[[packages]]\nname = "click"\nversion = "8.1.7"\n'
        f'wheels = [{{ url = "https://i.invalid/click.whl", hashes = {{ sha256 = "{HASH}" }} }}]\n'
        f'[[packages]]\nname = "click"\nversion = "8.1.8"\n'
        f'archive = {{ path = "/tmp/x/click-8.1.8-py3-none-any.whl", hashes = {{ sha256 = "{HASH}" }} }}\n'
    ).encode()
    assert lock_report.read(raw, TREE, "click") == Resolved(pinned=(), local=(), dropped=("click 8.1.7",))


# The environment check: what a run would import from, the venv then the layer.
def lay(site: Path, name: str, version: str, own: bool = False) -> None:
    """A distribution as an installer leaves one: a module, its dist-info,
    a RECORD that lists both with their hashes (own: from a local folder)."""
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name.lower()}_{version.replace('.', '_')}.py": b"",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
    }
    if own:
        files[f"{info}/direct_url.json"] = b'{"url": "file:///tmp/w", "dir_info": {"editable": true}}'
    rows = "".join(
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip('=')},{len(data)}\n"
        for path, data in files.items()
    )
    for path, data in {**files, f"{info}/RECORD": (rows + f"{info}/RECORD,,\n").encode()}.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_bytes(data)


@pytest.fixture
def venv_and_layer(tmp_path: Path) -> tuple[Path, Path]:
    for name in (".venv", "layer"):
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / name)], check=True)
    return tmp_path / ".venv", tmp_path / "layer"


def test_a_release_in_the_layer_beside_heads_project_is_refused(
    venv_and_layer: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    venv, layer = venv_and_layer
    lay(venv / SITE, "selfpin", "2.0", own=True)
    lay(layer / SITE, "pytest", "8.3.4")
    assert env_check.write_link(str(venv), str(layer)) == ""
    monkeypatch.setenv("GATE_LAYER", str(layer))
    assert env_check.check(str(venv)) == []
    lay(layer / SITE, "SelfPin", "1.0")
    assert env_check.check(str(venv)) == [
        env_check.Problem(
            env_check.TWICE, "selfpin (selfpin-2.0.dist-info in .venv, SelfPin-1.0.dist-info in the dependency layer)"
        )
    ]


def test_the_check_the_sandbox_runs_says_so_in_one_line(venv_and_layer: tuple[Path, Path], tmp_path: Path) -> None:
    """The bundled script (dist_names.py with it) run alone, isolated, as
    the install runs it (from a file here: its text names installers)."""
    venv, layer = venv_and_layer
    lay(venv / SITE, "selfpin", "2.0", own=True)
    lay(layer / SITE, "Self.Pin", "1.0")
    lay(layer / SITE, "selfpin", "1.0")
    assert env_check.write_link(str(venv), str(layer)) == ""
    report = tmp_path / "report.json"
    script = tmp_path / "check.py"
    script.write_text(scripts.ENV_CHECK)
    subprocess.run(
        ["python3", "-I", "-S", str(script), str(report), "all", str(venv)],
        check=True,
        env={"GATE_LAYER": str(layer), "PATH": os.environ["PATH"]},
    )
    assert json.loads(report.read_text())["summary"] == (
        "the install left two distributions of one name, one shadowing the other: selfpin (selfpin-2.0.dist-info in "
        ".venv, selfpin-1.0.dist-info in the dependency layer)"
    )


def test_a_layer_holding_one_name_twice_is_refused(venv_and_layer: tuple[Path, Path]) -> None:
    _, layer = venv_and_layer
    lay(layer / SITE, "Py_YAML", "6.0")
    lay(layer / SITE, "py.yaml", "6.0.1")
    assert env_check.verify_layer(str(layer)) == [
        f"{env_check.TWICE}: py-yaml (Py_YAML-6.0.dist-info in layer, py.yaml-6.0.1.dist-info in layer)"
    ]


# A real gate: the project `selfpin` 2.0 in the tree; the loopback index
# serves selfpin 1.0, which has no `new`. Its requirements-dev.txt and its
# test extra both pin selfpin==1.0.
def wheel(name: str, version: str, files: dict[str, bytes]) -> tuple[str, bytes]:
    info = f"{name}-{version}.dist-info"
    files = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = (
        "".join(
            f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip('=')},"
            f"{len(data)}\n"
            for path, data in files.items()
        )
        + f"{info}/RECORD,,\n"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, data in {**files, f"{info}/RECORD": record.encode()}.items():
            archive.writestr(path, data)
    return f"{name}-{version}-py3-none-any.whl", buffer.getvalue()


BASE = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "selfpin"\nversion = "2.0"\n'
        '[project.optional-dependencies]\ntest = ["selfpin==1.0", "pytest"]\n'
        '[tool.setuptools]\npackages = ["selfpin"]\n'
    ),
    "requirements-dev.txt": "selfpin==1.0\n    # via a dev tool that depends on selfpin\n",
    "selfpin/__init__.py": "def old():\n    return 1\n",
    "tests/test_old.py": "from selfpin import old\n\n\ndef test_old():\n    assert old() == 1\n",
}
HEAD = {
    "selfpin/__init__.py": "def old():\n    return 1\n\n\ndef new():\n    return 2\n",
    "tests/test_new.py": (
        "import pathlib\n\nimport selfpin\nfrom selfpin import new\n\n\ndef test_new():\n"
        "    assert new() == 2\n\n\ndef test_the_tree_is_imported():\n"
        "    assert 'site-packages' not in pathlib.Path(selfpin.__file__).parts\n"
    ),
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("index")
    name, data = wheel("selfpin", "1.0", {"selfpin/__init__.py": b"def old():\n    return 1\n"})
    (folder / name).write_bytes(data)
    with served(folder) as url:
        yield url


def gate(repo: Path, work: Path) -> RunFinished:
    async def run() -> RunFinished:
        plan = await asyncio.to_thread(make_plan, GateRequest(repo, "main", "agent/x"))
        async for event in run_gate(plan, LocalBackend(work_root=work, layers=work / "layers")):
            if isinstance(event, RunFinished):
                return event
        raise AssertionError("the gate ended without a verdict")

    return asyncio.run(run())


@pytest.mark.skipif(
    not probe_isolation().full, reason=f"the local backend cannot isolate runs here ({probe_isolation().reason})"
)
@pytest.mark.sandbox
@pytest.mark.install
@pytest.mark.parametrize(
    "uv", ["on", pytest.param("off", marks=pytest.mark.slow)]
)  # pip alone in CI (`make test-slow`)
def test_head_is_tested_not_the_release_its_requirements_pin(
    index: str, tmp_path: Path, uv: str, make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runs import head's tree (its new function is there, its file is
    not in a site-packages) and pass: uv, or pip without it, resolves from
    the stub, with the project left out of both pins; no release of it
    was resolved, so none was left out (no note)."""
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", index)
    if uv == "off":
        monkeypatch.setenv("GATETUI_UV", "off")
    repo = make_repo(BASE, HEAD)
    finished = gate(repo, tmp_path / "work")
    statuses = {r.id.value: r.status.value for r in finished.results}
    assert {k: statuses[k] for k in ("install", "runs", "old_tests", "covered")} == {
        "install": "pass",
        "runs": "pass",
        "old_tests": "pass",
        "covered": "pass",
    }
    assert [n for n in finished.notes if n.startswith("not installed")] == []
