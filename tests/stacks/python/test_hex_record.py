"""A RECORD that writes its digests in hex, not the wheel spec's urlsafe
base64: the same bytes, installed by pip and uv without a word (a release of
a popular Sphinx theme does it). The environment check compares digests as
bytes, accepts both spellings, names the distribution in the gate's notes,
and still refuses a file whose bytes differ from either spelling."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
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
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from gatetui.stacks.python import env_check
from tests.support.repos import MakeRepo

SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
MODULE = b"VALUE = 42\n"


def hex_row(name: str, data: bytes) -> str:
    return f"{name},sha256={hashlib.sha256(data).hexdigest()},{len(data)}\n"


def b64_row(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip("=")
    return f"{name},sha256={digest},{len(data)}\n"


def venv_with(tmp_path: Path, record: str, module: bytes = MODULE) -> str:
    """A venv holding one distribution, hexdep, whose RECORD is `record`."""
    venv = tmp_path / "venv"
    site = venv / SITE
    (site / "hexdep-1.0.dist-info").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).resolve().parent}\n")
    (site / "hexdep.py").write_bytes(module)
    (site / "hexdep-1.0.dist-info" / "RECORD").write_text(record)
    return str(venv)


def test_a_hex_record_is_accepted_and_named(tmp_path: Path) -> None:
    venv = venv_with(tmp_path, hex_row("hexdep.py", MODULE) + "hexdep-1.0.dist-info/RECORD,,\n")
    assert env_check.check(venv) == []
    assert env_check.hex_records(env_check.site_dirs(venv)) == ["hexdep-1.0"]


def test_a_conforming_record_is_not_named(tmp_path: Path) -> None:
    venv = venv_with(tmp_path, b64_row("hexdep.py", MODULE) + "hexdep-1.0.dist-info/RECORD,,\n")
    assert env_check.check(venv) == []
    assert env_check.hex_records(env_check.site_dirs(venv)) == []


@pytest.mark.parametrize(
    "row",
    [
        hex_row("hexdep.py", b"VALUE = 0\n"),  # the file changed after its hex RECORD was written
        b64_row("hexdep.py", b"VALUE = 0\n"),
        "hexdep.py,sha256=" + "zz" * 32 + ",11\n",  # neither spelling
        "hexdep.py,sha256=" + hashlib.sha256(MODULE).hexdigest()[:62] + ",11\n",  # hex one byte short
        "hexdep.py,nosuchhash=" + hashlib.sha256(MODULE).hexdigest() + ",11\n",
    ],
    ids=["hex-changed", "base64-changed", "neither", "short", "unknown-algorithm"],
)
def test_a_file_matching_neither_spelling_is_changed(tmp_path: Path, row: str) -> None:
    venv = venv_with(tmp_path, row + "hexdep-1.0.dist-info/RECORD,,\n")
    assert env_check.check(venv) == [env_check.Problem(env_check.CHANGED, "hexdep.py")]


@given(st.binary(max_size=200), st.sampled_from(["sha256", "sha384", "sha512", "md5"]))
def test_both_spellings_give_the_same_bytes(data: bytes, algorithm: str) -> None:
    raw = hashlib.new(algorithm, data).digest()
    b64 = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    assert env_check.digest_bytes(hashlib.new(algorithm, data).hexdigest(), len(raw)) == raw
    assert env_check.digest_bytes(b64, len(raw)) == raw
    assert env_check.is_hex_digest(b64, len(raw)) is False


@given(st.text(max_size=100))
def test_any_value_is_bytes_of_the_size_or_none(value: str) -> None:
    found = env_check.digest_bytes(value, 32)
    assert found is None or len(found) == 32


# --- a real gate: the wheel from an index on the host's loopback -------------------------


def hexdep_wheel() -> tuple[str, bytes]:
    files = {
        "hexdep.py": MODULE,
        "hexdep-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: hexdep\nVersion: 1.0\n",
        "hexdep-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = "".join(hex_row(name, data) for name, data in files.items()) + "hexdep-1.0.dist-info/RECORD,,\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in {**files, "hexdep-1.0.dist-info/RECORD": record.encode()}.items():
            archive.writestr(name, data)
    return "hexdep-1.0-py3-none-any.whl", buffer.getvalue()


BASE = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "hexuser"\nversion = "0"\ndependencies = ["hexdep"]\n'
        '[project.optional-dependencies]\ntest = ["pytest"]\n[tool.setuptools]\npackages = ["hexuser"]\n'
    ),
    "hexuser/__init__.py": "from hexdep import VALUE\n\n\ndef answer():\n    return VALUE\n",
    "tests/test_answer.py": "from hexuser import answer\n\n\ndef test_answer():\n    assert answer() == 42\n",
}
HONEST = {
    "hexuser/__init__.py": BASE["hexuser/__init__.py"] + "\n\ndef half():\n    return VALUE // 2\n",
    "tests/test_half.py": "from hexuser import half\n\n\ndef test_half():\n    assert half() == 21\n",
}


@pytest.fixture(scope="module")
def hex_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("hexhouse")
    name, data = hexdep_wheel()
    (folder / name).write_bytes(data)
    with served(folder) as url:
        yield url


@pytest.mark.sandbox
@pytest.mark.install
@pytest.mark.skipif(
    not probe_isolation().full, reason=f"the local backend cannot isolate runs here ({probe_isolation().reason})"
)
def test_a_dependency_with_a_hex_record_gates_an_honest_change(
    hex_index: str, tmp_path: Path, make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", hex_index)
    repo = make_repo(BASE, HONEST)

    async def run() -> RunFinished:
        plan = await asyncio.to_thread(make_plan, GateRequest(repo, "main", "agent/x"))
        async for event in run_gate(plan, LocalBackend(work_root=tmp_path / "work", layers=tmp_path / "layers")):
            if isinstance(event, RunFinished):
                return event
        raise AssertionError("the gate ended without a verdict")

    finished = asyncio.run(run())
    said = {r.id.value: f"{r.status.value}: {r.detail}" for r in finished.results}
    assert said["install"].startswith("pass"), said
    assert finished.verdict.value == "pass", said
    assert [n for n in finished.notes if "RECORD" in n] == [
        "non-conforming RECORD: hexdep-1.0 write their digests in hex, not the wheel spec's urlsafe base64; "
        "compared as the same bytes"
    ]
    layers = [
        json.loads((folder / "info.json").read_text())
        for folder in (tmp_path / "layers").iterdir()
        if (folder / "info.json").is_file()
    ]
    assert any("hexdep==1.0" in str(info.get("holds")) for info in layers), layers
