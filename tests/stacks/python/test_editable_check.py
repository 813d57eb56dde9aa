"""setuptools' own editable install is accepted by the environment check,
exactly as setuptools writes it, and nothing that only looks like it.

The finder here is a real one: a flat-layout project installed with
`pip install -e .` into a venv of the machine's interpreter, the build run
by the setuptools of that venv (no index asked for the build)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatetui.stacks.python import editable_check, env_check, scripts

SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"


@pytest.fixture(scope="module")
def editable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The venv of a project installed the way docs/explanation/stacks.md's custom install does."""
    tree = tmp_path_factory.mktemp("tree")
    (tree / "calc").mkdir()
    (tree / "calc" / "__init__.py").write_text("def double(x):\n    return 2 * x\n")
    (tree / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\n'
        'build-backend = "setuptools.build_meta"\n'
        '[project]\nname = "calc"\nversion = "1.0"\n'
        '[tool.setuptools]\npackages = ["calc"]\n'
    )
    subprocess.run([sys.executable, "-m", "venv", str(tree / ".venv")], check=True)
    pip = [str(tree / ".venv" / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "setuptools>=64", "wheel"], check=True)  # wheel: bdist_wheel before setuptools 70.1
    subprocess.run([*pip, "--no-build-isolation", "-e", str(tree)], check=True)
    return tree / ".venv"


def finder_of(venv: Path) -> tuple[Path, str]:
    (finder,) = (venv / SITE).glob("__editable___calc_*_finder.py")
    return finder, finder.read_text()


@pytest.mark.install
def test_a_real_editable_install_passes_the_check(editable: Path) -> None:
    (pth,) = (editable / SITE).glob("__editable__.calc-*.pth")
    assert pth.read_text().startswith("import __editable___calc_")
    assert env_check.check(str(editable)) == []
    _, text = finder_of(editable)
    assert editable_check.finder_ok(text, str(editable)) is True


@pytest.mark.install
def test_the_bundled_script_runs_alone_and_accepts_it(editable: Path, tmp_path: Path) -> None:
    """As the sandbox runs it: the machine's interpreter, isolated, nothing of the gate importable."""
    report = tmp_path / "report.json"
    done = subprocess.run(
        ["python3", "-I", "-S", "-c", scripts.ENV_CHECK, str(report), "all", str(editable)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(report.read_text())["problems"] == []


@pytest.mark.install
@pytest.mark.parametrize(
    "change",
    [
        (
            "def install():\n",
            "def install():\n    import _pytest.python as _p; _p.Function.runtest = lambda self: None\n",
        ),
        ("from pathlib import Path\n", "from pathlib import Path\nimport os\n"),
        ("MAPPING", "MAPPING = {}\nMAPPING"),  # a second data line
        ("NAMESPACES", "NAMESPACES_ = {}\nNAMESPACES"),
    ],
    ids=["code-in-install", "an-import", "mapping-twice", "an-extra-assignment"],
)
def test_a_finder_with_anything_changed_is_refused(editable: Path, change: tuple[str, str]) -> None:
    _, text = finder_of(editable)
    assert change[0] in text
    assert editable_check.finder_ok(text.replace(change[0], change[1], 1), str(editable)) is False


@pytest.mark.install
@pytest.mark.parametrize(
    "mapping",
    [
        "{'calc': '/etc'}",  # outside the tree
        "{'calc': '{venv}/lib'}",  # inside the environment
        "{'calc': '{tree}/calc/../../elsewhere'}",
        "{'calc': 'calc'}",  # relative: wherever the run starts
        "{'sitecustomize': '{tree}/calc'}",  # a name every interpreter imports at start
        "{'calc': '{tree}/calc'}; import os",  # code after the literal
        "dict(calc='{tree}/calc')",  # a call, not a literal
        "{'calc': ['{tree}/calc']}",
    ],
    ids=["outside", "in-venv", "dotdot", "relative", "startup-name", "code-after", "a-call", "not-a-str"],
)
def test_a_mapping_outside_the_tree_or_not_plain_is_refused(editable: Path, mapping: str) -> None:
    _, text = finder_of(editable)
    value = mapping.replace("{tree}", str(editable.parent)).replace("{venv}", str(editable))
    assert editable_check.finder_ok(with_mapping(text, value), str(editable)) is False
    assert editable_check.finder_ok(with_mapping(text, f"{{'calc': '{editable.parent}/calc'}}"), str(editable)) is True


def with_mapping(text: str, value: str) -> str:
    """The finder with its MAPPING line's value replaced, all else kept byte for byte."""
    changed, count = re.subn(r"^(MAPPING[^=\n]*= ).*$", lambda m: m.group(1) + value, text, flags=re.M)
    assert count == 1
    return changed


@pytest.mark.install
def test_the_pth_must_be_setuptools_line_and_name(editable: Path, tmp_path: Path) -> None:
    (pth,) = (editable / SITE).glob("__editable__.calc-*.pth")
    line = pth.read_text()
    read = env_check.read_text
    assert editable_check.setuptools_editable(str(pth), line, str(editable), read) is True
    assert editable_check.setuptools_editable(str(pth), line + "import os\n", str(editable), read) is False
    assert (
        editable_check.setuptools_editable(str(pth), line.replace("install()", "install(); 1"), str(editable), read)
        is False
    )
    other = pth.with_name("zz-calc.pth")
    assert editable_check.setuptools_editable(str(other), line, str(editable), read) is False
    missing = line.replace("_finder", "_nofinder")
    assert editable_check.setuptools_editable(str(pth), missing, str(editable), read) is False


def test_a_hook_of_heads_own_that_is_not_setuptools_is_still_refused(tmp_path: Path) -> None:
    """The check as a whole: head's own distribution with an `import` .pth
    and a module beside it that no setuptools release wrote."""
    venv = tmp_path / ".venv"
    site = venv / SITE
    info = site / "calc-1.0.dist-info"
    info.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).resolve().parent}\n")
    (site / "__editable__.calc-1.0.pth").write_text(
        "import __editable___calc_1_0_finder; __editable___calc_1_0_finder.install()"
    )
    (site / "__editable___calc_1_0_finder.py").write_text("def install():\n    pass\n")
    (info / "direct_url.json").write_text('{"url": "file:///tree", "dir_info": {"editable": true}}')
    (info / "RECORD").write_text(
        "__editable__.calc-1.0.pth,,\n__editable___calc_1_0_finder.py,,\n"
        "calc-1.0.dist-info/RECORD,,\ncalc-1.0.dist-info/direct_url.json,,\n"
    )
    assert env_check.check(str(venv)) == [env_check.Problem(env_check.HOOKS, "__editable__.calc-1.0.pth")]


@given(st.text(max_size=400))
def test_any_text_is_no_finder(text: str) -> None:
    assert editable_check.finder_ok(text, "/tree/.venv") is False
