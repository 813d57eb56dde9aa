"""The environment check: real venvs, distributions laid out as installers
lay them out (dist-info, RECORD with hashes), and what an install could
leave behind."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatetui.stacks.python.env_check import CHANGED, HOME, HOOKS, LINKS, RUNNER, UNACCOUNTED, check, runs_code

SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"


@pytest.fixture(scope="module")
def made_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real venv; each test works on a copy."""
    venv = tmp_path_factory.mktemp("made") / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return venv


@pytest.fixture
def venv(made_venv: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "tree" / ".venv"
    dest.parent.mkdir()
    subprocess.run(["cp", "-a", str(made_venv), str(dest)], check=True)
    home = (dest / "pyvenv.cfg").read_text()
    assert "home = " in home
    return dest


def digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip("=")


def install(venv: Path, name: str, files: dict[str, bytes], own: bool = False) -> None:
    """A distribution as pip leaves one: its files, and a dist-info whose
    RECORD lists each with its hash (own: installed from a local folder)."""
    site = venv / SITE
    info = f"{name}-1.0.dist-info"
    files = {**files, f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode()}
    if own:
        files[f"{info}/direct_url.json"] = json.dumps({"url": "file:///tmp/w", "dir_info": {"editable": True}}).encode()
    rows = io.StringIO()
    for rel, data in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_bytes(data)
        rows.write(f"{rel},{digest(data)},{len(data)}\n")
    rows.write(f"{info}/RECORD,,\n")
    (site / info / "RECORD").write_text(rows.getvalue())


def problems(venv: Path) -> list[tuple[str, str]]:
    return [(p.why, p.path) for p in check(str(venv))]


def test_a_venv_of_recorded_distributions_has_no_problem(venv: Path) -> None:
    install(venv, "requests", {"requests/__init__.py": b"x = 1\n", "requests/__pycache__/x.pyc": b"anything"})
    install(venv, "mathlib", {"__editable__.mathlib-1.0.pth": b"/tmp/w\n"}, own=True)
    install(venv, "coverage", {"coverage.pth": b"import coverage_hook\n", "coverage_hook.py": b""})
    assert problems(venv) == []


def test_a_file_no_record_lists_is_named(venv: Path) -> None:
    install(venv, "requests", {"requests/__init__.py": b"x = 1\n"})
    (venv / SITE / "zz.pth").write_text("import zz\n")
    (venv / SITE / "requests" / "extra.py").write_text("")
    (venv / "bin" / "pytest").write_text("#!/bin/sh\n")
    assert sorted(problems(venv)) == [
        (UNACCOUNTED, ".venv/bin/pytest"),
        (UNACCOUNTED, "requests/extra.py"),
        (UNACCOUNTED, "zz.pth"),
    ]


def test_a_file_changed_after_its_install_is_named(venv: Path) -> None:
    install(venv, "pytest", {"_pytest/runner.py": b"def run(): pass\n"})
    (venv / SITE / "_pytest" / "runner.py").write_text("def run(): return 'passed'\n")
    assert problems(venv) == [(CHANGED, "_pytest/runner.py")]


@pytest.mark.parametrize(
    ("files", "named"),
    [
        ({"mathlib.pth": b"/tmp/w\nimport mathlib_boot\n"}, "mathlib.pth"),
        ({"sitecustomize.py": b""}, "sitecustomize.py"),
        ({"usercustomize.py": b""}, "usercustomize.py"),
    ],
)
def test_heads_own_project_brings_no_startup_hook(venv: Path, files: dict[str, bytes], named: str) -> None:
    install(venv, "mathlib", files, own=True)
    assert problems(venv) == [(HOOKS, named)]


def test_heads_own_project_brings_no_script_in_the_runners_name(venv: Path) -> None:
    install(venv, "mathlib", {"../../../bin/pytest": b"#!/bin/sh\n"}, own=True)
    assert problems(venv) == [(RUNNER, ".venv/bin/pytest")]


def test_a_link_in_site_packages_is_named(venv: Path) -> None:
    (venv / SITE / "evil.pth").symlink_to("/etc/hostname")
    assert problems(venv) == [(LINKS, "evil.pth")]


def test_an_interpreter_home_inside_the_tree_is_named(venv: Path) -> None:
    cfg = venv / "pyvenv.cfg"
    cfg.write_text(cfg.read_text().replace("home = ", f"home = {venv.parent}/fake #", 1))
    (venv.parent / "fake").mkdir()
    assert (HOME, "pyvenv.cfg") in problems(venv)


def site_would_run(text: str) -> bool:
    """site.addpackage's own reading of a .pth file, line by line."""
    for line in io.StringIO(text, newline=None):
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith(("import ", "import\t")):
            return True
    return False


@given(
    st.lists(
        st.sampled_from(
            [
                "import os",
                "import\tos",
                "/a/path",
                "# import x",
                " import y",
                "",
                "\r",
                "\n",
                "\r\n",
                "\x0c",
                "importx",
                "\u2028",
            ]
        )
    ).map("".join)
)
def test_every_pth_line_site_would_run_is_seen(text: str) -> None:
    if site_would_run(text):
        assert runs_code(text)
