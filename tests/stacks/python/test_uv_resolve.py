"""uv's resolve: head's installed metadata packed as a wheel (own_stub.py),
`uv pip compile` to a pylock.toml, and that lock read as hostile
(lock_report.py); pip's resolve where uv gives way."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatetui.backends.isolation import probe_isolation
from gatetui.backends.local import LocalBackend
from gatetui.gate.checks import Verdict
from gatetui.gate.events import GateEvent, OutputChunk, RunFinished
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from gatetui.stacks.base import ReportProblem, Resolved
from gatetui.stacks.python import own_stub
from gatetui.stacks.python.installer import find_uv
from gatetui.stacks.python.lock_report import read, split
from tests.support.gating import shared_layers
from tests.support.repos import MakeRepo

TREE = "/tmp/w/ws"
H1, H2 = "a" * 64, "b" * 64


def lock(*packages: str) -> bytes:
    return ('lock-version = "1.0"\ncreated-by = "uv"\n' + "".join(f"\n[[packages]]\n{p}\n" for p in packages)).encode()


def index_package(name: str, version: str = "1.0", *hashes: str) -> str:
    wheels = ", ".join(
        f'{{ url = "https://i.invalid/{name}-{i}.whl", hashes = {{ sha256 = "{h}" }} }}' for i, h in enumerate(hashes)
    )
    return f'name = "{name}"\nversion = "{version}"\nwheels = [{wheels}]'


def test_the_index_is_pinned_with_every_file_hash_and_the_tree_is_local() -> None:
    raw = lock(
        index_package("pytest", "9.0", H2, H1),
        'name = "mathlib"\ndirectory = { path = ".", editable = true }',
        'name = "sub"\ndirectory = { path = "libs/sub" }',
        'name = "vendored"\nversion = "2"\narchive = { path = "wheels/v.whl", hashes = { sha256 = "' + H1 + '" } }',
        'name = "fromgit"\nvcs = { type = "git", url = "https://g.invalid/r.git", commit-id = "0123abcd" }',
        'name = "pinned-sdist"\nversion = "3"\nsdist = { url = "https://i.invalid/p.tar.gz", hashes = { sha256 = "'
        + H2
        + '" } }',
    )
    assert split(raw, TREE, "") == Resolved(
        pinned=(f"pinned-sdist==3 --hash=sha256:{H2}", f"pytest==9.0 --hash=sha256:{H1} --hash=sha256:{H2}"),
        local=(
            "-e",
            TREE,
            f"{TREE}/libs/sub",
            f"{TREE}/wheels/v.whl",
            "fromgit @ git+https://g.invalid/r.git@0123abcd",
        ),
    )


def test_heads_own_project_is_dropped_whatever_its_spelling() -> None:
    raw = lock(
        'name = "My.Project"\nversion = "0"\narchive = { path = "/tmp/x/My_Project-0-py3-none-any.whl", '
        f'hashes = {{ sha256 = "{H1}" }} }}',
        index_package("iniconfig", "2", H1),
    )
    assert split(raw, TREE, "my-project") == Resolved((f"iniconfig==2 --hash=sha256:{H1}",), ())


def test_an_archive_named_by_url_is_pinned_and_said_to_be_direct() -> None:
    raw = lock(
        f'name = "odd"\nversion = "1"\narchive = {{ url = "https://e.invalid/odd.whl", hashes = {{ sha256 = "{H1}" }} }}'
    )
    assert split(raw, TREE, "") == Resolved((f"odd==1 --hash=sha256:{H1}",), (), ("odd",))


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b"lock-version = ", "uv's resolve wrote no readable lock (pylock.toml)"),
        (b"\xff\xfe", "uv's resolve wrote no readable lock (pylock.toml)"),
        (b"packages = 3", "uv's resolve wrote a lock whose packages are not a list"),
        (lock('name = "x; rm -rf /"\nversion = "1"'), "uv's resolve lists a package without a name the gate can use"),
        (
            lock('name = "up"\ndirectory = { path = "../../etc" }'),
            "uv's resolve points outside the tree for up: /tmp/etc",
        ),
        (
            lock('name = "x"\nversion = "1"\nwheels = [{ url = "https://i.invalid/x.whl" }]'),
            "uv's resolve names x 1 without a name, version and sha256 the gate can pin",
        ),
        (
            lock(
                f'name = "x"\nversion = "1 --index-url=evil"\nwheels = [{{ url = "https://i/x.whl", hashes = {{ sha256 = "{H1}" }} }}]'
            ),
            "uv's resolve names x 1 --index-url=evil without a name, version and sha256 the gate can pin",
        ),
        (
            lock('name = "x"\nvcs = { type = "git", url = "https://g.invalid/r.git; rm -rf /", commit-id = "1" }'),
            "uv's resolve names x from version control without a URL and commit the gate can use",
        ),
        (
            lock('name = "x"\nversion = "1"\nwheels = [{ path = "a.whl" }, { path = "b.whl" }]'),
            "uv's resolve names 2 files in the tree for x: name one",
        ),
        (lock('name = "x"\nversion = "1"'), "uv's resolve names x without a file the gate can pin"),
    ],
)
def test_a_lock_the_gate_cannot_trust_is_refused_in_one_line(raw: bytes, said: str) -> None:
    with pytest.raises(ReportProblem) as refused:
        split(raw, TREE, "")
    assert str(refused.value) == said


def test_pips_report_is_still_read_where_pip_resolved() -> None:
    raw = (
        b'{"install": [{"metadata": {"name": "a", "version": "1"}, "download_info": '
        b'{"url": "https://i.invalid/a.whl", "archive_info": {"hashes": {"sha256": "' + H1.encode() + b'"}}}}]}'
    )
    assert read(raw, TREE, "own") == Resolved((f"a==1 --hash=sha256:{H1}",), ())
    with pytest.raises(ReportProblem, match="pip wrote no readable installation report"):
        read(b"", TREE, "own")


VALUE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=12)
    | st.sampled_from([H1, "../x", "libs/a", "https://i.invalid/a.whl", f"file://{TREE}/a.whl", "git"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["path", "url", "hashes", "sha256", "editable", "type", "commit-id"]), inner, max_size=3
        )
    ),
    max_leaves=12,
)
PACKAGE = st.dictionaries(
    st.sampled_from(["name", "version", "wheels", "sdist", "archive", "directory", "vcs"]), VALUE, max_size=4
)


def toml_value(value: object) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f'"{k}" = {toml_value(v)}' for k, v in value.items() if v is not None) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


@given(st.lists(PACKAGE, max_size=4))
def test_any_lock_is_read_or_refused_never_a_crash(packages: list[dict[str, object]]) -> None:
    raw = lock(*("\n".join(f'"{k}" = {toml_value(v)}' for k, v in p.items() if v is not None) for p in packages))
    try:
        tomllib.loads(raw.decode())
    except tomllib.TOMLDecodeError:
        return  # a shape TOML cannot hold (a null in an array)
    try:
        resolved = split(raw, TREE, "")
    except ReportProblem:
        return
    assert all(" --hash=sha256:" in line and "\n" not in line for line in resolved.pinned)
    assert all(not arg.startswith("/") or arg == TREE or arg.startswith(TREE + "/") for arg in resolved.local)


# --- the stub, with the real uv --------------------------------------------------------------

UV = find_uv()
needs_uv = pytest.mark.skipif(UV is None, reason="uv is not installed here (`make venv` installs it)")
SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
METADATA = (
    b"Metadata-Version: 2.1\nName: My.Project\nVersion: 0.1+local\nProvides-Extra: test\n"
    b"Requires-Dist: iniconfig\nRequires-Dist: pytest ; extra == 'test'\n"
    b"Requires-Dist: pluggy ; extra == 'nothing'\n\nA description: Name: Other\n"
)


def installed(venv: Path, name: str, metadata: bytes) -> None:
    info = venv / SITE / f"{name}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_bytes(metadata)


def test_the_stub_holds_the_installed_metadata_and_nothing_else(tmp_path: Path) -> None:
    installed(tmp_path / ".venv", "My.Project-0.1+local", METADATA)
    installed(tmp_path / ".venv", "other-1", b"Name: other\nVersion: 1\n")
    found = own_stub.find_metadata(str(tmp_path / ".venv"), "my-project")
    assert found == ("My.Project", "0.1+local", METADATA)
    wheel = own_stub.write_stub(*found, str(tmp_path))
    with zipfile.ZipFile(wheel) as archive:
        assert sorted(archive.namelist()) == [
            f"My_Project-0.1+local.dist-info/{n}" for n in ("METADATA", "RECORD", "WHEEL")
        ]
        assert archive.read("My_Project-0.1+local.dist-info/METADATA") == METADATA
    assert Path(wheel).name == "My_Project-0.1+local-py3-none-any.whl"


def test_a_linked_or_missing_metadata_is_no_project(tmp_path: Path) -> None:
    info = tmp_path / ".venv" / SITE / "x-1.dist-info"
    info.mkdir(parents=True)
    (tmp_path / "elsewhere").write_bytes(b"Name: x\nVersion: 1\n")
    (info / "METADATA").symlink_to(tmp_path / "elsewhere")
    assert own_stub.find_metadata(str(tmp_path / ".venv"), "x") is None
    done = subprocess.run(
        [sys.executable, "-I", "-S", own_stub.__file__, str(tmp_path / ".venv"), "x", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("gatetui: no installed distribution named x with readable metadata")


@needs_uv
def test_uv_resolves_the_extra_from_the_stub_as_pip_would(tmp_path: Path) -> None:
    """The extra's requirement is in; one behind another extra's marker is
    not; the stub itself is dropped by name."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / ".venv")], check=True)
    installed(tmp_path / ".venv", "My.Project-0.1+local", METADATA)
    stub = own_stub.write_stub(
        *own_stub.find_metadata(str(tmp_path / ".venv"), "my-project") or ("", "", b""), str(tmp_path)
    )
    done = subprocess.run(
        [
            str(UV),
            "pip",
            "compile",
            "--quiet",
            "--no-header",
            "--python",
            str(tmp_path / ".venv/bin/python"),
            "--format",
            "pylock.toml",
            "-",
        ],
        input=f"My.Project[test] @ file://{stub}\n".encode(),
        cwd=tmp_path,
        capture_output=True,
        env={**os.environ, "UV_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr.decode()
    resolved = split(done.stdout, str(tmp_path), "my-project")
    names = sorted(line.split("==", 1)[0].lower() for line in resolved.pinned)
    assert "iniconfig" in names and "pytest" in names and "my-project" not in names
    assert (resolved.local, resolved.direct) == ((), ())


# --- whole gates ------------------------------------------------------------------------------

needs_isolation = pytest.mark.skipif(
    not probe_isolation().full, reason=f"the local backend cannot isolate runs here ({probe_isolation().reason})"
)
BASE = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "leaning"\nversion = "0"\ndependencies = ["helper"]\n'
        '[tool.setuptools]\npackages = ["leaning"]\n'
    ),
    "leaning/__init__.py": "from helper import HALF\n\n\ndef half(x):\n    return x * HALF\n",
    # metadata only its setup.py gives: the resolve must build it
    "libs/helper/pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n',
    "libs/helper/helper.py": "HALF = 0.5\n",
    # the helper's build runs while the dependencies resolve: it finds no variable of the gate's
    "libs/helper/setup.py": (
        "import os\nfrom setuptools import setup\n\n"
        "seen = sorted(k for k in os.environ if k.startswith('GATE'))\n"
        "if seen:\n    raise SystemExit(f'built inside the gate: {seen}')\n"
        "setup(name='helper', version='1', py_modules=['helper'])\n"
    ),
    "requirements-test.txt": "-e ./libs/helper\n",
    "tests/test_half.py": "from leaning import half\n\n\ndef test_half():\n    assert half(4) == 2\n",
}


@needs_isolation
@pytest.mark.sandbox
@pytest.mark.install
@pytest.mark.parametrize(
    "names_itself",
    [False, pytest.param(True, marks=pytest.mark.slow)],  # the project naming itself in CI (`make test-slow`)
    ids=["local-dependency", "names-the-project-itself"],
)
def test_a_project_with_a_dependency_in_its_tree_passes(
    make_repo: MakeRepo, tmp_path: Path, names_itself: bool
) -> None:
    """A tree-local dependency resolves as head's (installed with head's
    build, which sees no variable that marks the gate: the resolve's own
    script is unset before uv starts); a requirements file that names the project itself (`-e .`),
    which uv will not take beside the installed metadata, is resolved by pip."""
    files = {**BASE, "requirements-test.txt": "-e .\n-e ./libs/helper\n"} if names_itself else BASE
    repo = make_repo(
        files, {"tests/test_double.py": "from leaning import half\n\n\ndef test_double():\n    assert half(8) == 4\n"}
    )
    events = gate_events(repo, tmp_path / "work")
    done = events[-1]
    assert isinstance(done, RunFinished)
    assert (done.verdict, {r.id.value: r.status.value for r in done.results}["install"]) == (Verdict.PASS, "pass")
    said = "".join(e.text for e in events if isinstance(e, OutputChunk) and e.stream == "install").splitlines()
    gave_way = [line for line in said if line.startswith("gatetui: uv could not resolve")]
    assert gave_way == (
        ["gatetui: uv could not resolve from the installed project; pip resolves instead"]
        if names_itself and UV is not None
        else []
    )


def gate_events(repo: Path, work: Path) -> list[GateEvent]:
    async def go() -> list[GateEvent]:
        plan = make_plan(GateRequest(repo, "main", "agent/x"))
        return [e async for e in run_gate(plan, LocalBackend(work_root=work, layers=shared_layers()))]

    return asyncio.run(go())
