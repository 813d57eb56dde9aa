"""A python mutant run from memory (stacks/python/mutant_import.py): the
code the tests run is the mutant's, what they read of the file is head's.

Each test runs real pytest in a subprocess over a small tree, the gate's
plugin written beside it as a run's gate folder holds it, and reads what a
probe test inside saw: once without the plugin (head's own run), once with
it (a mutant's), so every difference a test could see is listed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from gatetui.git.snapshot import Snapshot
from gatetui.stacks.mutation import Mutant
from gatetui.stacks.python.mutant_import import in_memory
from gatetui.stacks.registry import load_profile

CORE = textwrap.dedent('''\
    """Doubling, and a failure to trace."""


    def double(n):
        return n * 2


    def fail():
        raise ValueError("no")
    ''')
MUTANT = Mutant("pkg/core.py", 5, "constant", "return n * 2", "return n * 3", CORE.replace("n * 2", "n * 3").encode())
PROBE = textwrap.dedent("""\
    import importlib.machinery
    import importlib.util
    import inspect
    import json
    import linecache
    import os
    import sys
    import traceback

    import pkg.core as core
    import pkg.other as other


    def test_probe():
        spec = importlib.util.spec_from_file_location("again", core.__file__)
        again = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(again)
        try:
            core.fail()
        except ValueError as err:
            frame = traceback.extract_tb(err.__traceback__)[-1]
        seen = {
            "double": core.double(5), "again": again.double(5), "other": other.triple(5),
            "file": open(core.__file__).read(), "size": os.stat(core.__file__).st_size,
            "getsource": inspect.getsource(core.double), "lines": "".join(linecache.getlines(core.__file__)),
            "loader_source": getattr(core.__loader__, "get_source", lambda name: None)("pkg.core"),
            "loader": type(core.__loader__) is importlib.machinery.SourceFileLoader,
            "meta_path": [type(f).__name__ for f in sys.meta_path],
            "traceback": [os.path.relpath(frame.filename), frame.lineno, frame.line],
        }
        with open(os.environ["PROBE_OUT"], "w") as out:
            json.dump(seen, out)
    """)


def tree(root: Path) -> None:
    for rel, text in {
        "pkg/__init__.py": "",
        "pkg/core.py": CORE,
        "pkg/other.py": "def triple(n):\n    return n * 3\n",
        "tests/test_probe.py": PROBE,
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def seen(root: Path, mutant: Mutant | None) -> dict[str, Any]:
    """What the probe saw, with the mutant's plugin loaded when given."""
    gate, out = root / ".site-gate", root.parent / f"seen-{mutant is not None}.json"
    gate.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "PROBE_OUT": str(out),
        "PYTHONPATH": f"{gate}{os.pathsep}{root}",
        "PYTEST_ADDOPTS": "-p no:randomly -p no:cacheprovider",
        # as in the gate's runs, no plugin is loaded unnamed: this suite's own (Textual's, hypothesis's)
        # would be imported, and rewritten where python_files takes every module, at each start
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    if mutant is not None:
        plugin = in_memory(mutant)
        for name, data in plugin.files.items():
            (gate / name).write_bytes(data)
        loads = plugin.env_for(str(gate))
        env["PYTEST_ADDOPTS"] += f" {loads['PYTEST_ADDOPTS']}"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "tests"], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(json.loads(out.read_text()))


@pytest.mark.drives
def test_the_tests_run_the_mutant_and_read_heads_file(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    tree(root)
    head, mutant = seen(root, None), seen(root, MUTANT)
    assert (head["double"], head["again"]) == (10, 10)
    # a loader a test builds itself compiles the mutant too: a second copy cannot tell the first apart
    assert (mutant["double"], mutant["again"], mutant["other"]) == (15, 15, 15)
    assert {key for key in head if head[key] != mutant[key]} == {"double", "again"}
    assert mutant["file"] == mutant["lines"] == mutant["loader_source"] == CORE
    assert (mutant["size"], mutant["getsource"]) == (len(CORE), "def double(n):\n    return n * 2\n")
    assert mutant["loader"] is True  # the module's loader is Python's own, and no finder was added
    assert mutant["traceback"] == ["pkg/core.py", 9, 'raise ValueError("no")']  # the file's own name and line
    assert (root / "pkg" / "core.py").read_text() == CORE


def test_the_plugin_holds_no_text_of_the_module_and_a_name_of_its_own() -> None:
    first, second = in_memory(MUTANT), in_memory(MUTANT)
    [(name, data)] = first.files.items()
    assert name != next(iter(second.files))
    assert name.startswith("site_") and name.endswith(".py")
    assert first.env_for("/t/.site-x") == {
        "PYTEST_ADDOPTS": f"-p {name.removesuffix('.py')}",
        "PYTHONPATH": "/t/.site-x",
    }
    assert [word for word in (b"double", b"n * 3", b"pkg/core.py", b"core") if word in data] == []


@pytest.mark.drives
def test_a_package_init_is_run_from_memory_too(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    tree(root)
    (root / "pkg" / "__init__.py").write_text("LEVEL = 1\n")
    (root / "tests" / "test_probe.py").write_text(
        "import json, os\nimport pkg\n\n\ndef test_probe():\n"
        "    json.dump({'level': pkg.LEVEL, 'file': open(pkg.__file__).read()}, open(os.environ['PROBE_OUT'], 'w'))\n"
    )
    init = Mutant("pkg/__init__.py", 1, "constant", "LEVEL = 1", "LEVEL = 2", b"LEVEL = 2\n")
    assert seen(root, init) == {"level": 2, "file": "LEVEL = 1\n"}


def test_only_the_python_stacks_pytest_declares_it() -> None:
    tests = {"tests/test_x.py": "def test_x():\n    pass\n"}
    python = load_profile(Snapshot.of_files({**tests, "pyproject.toml": '[project]\nname = "pkg"\n'}))
    custom = load_profile(Snapshot.of_files({**tests, "pyproject.toml": '[tool.gatetui]\ntest = "make check"\n'}))
    node = load_profile(
        Snapshot.of_files(
            {
                "package.json": '{"scripts": {"test": "node --test"}}',
                "test/x.test.js": "require('node:test')('x', () => {});\n",
            }
        )
    )
    assert (python.lines.mutant_import is in_memory, custom.lines.mutant_import, node.lines.mutant_import) == (
        True,
        None,
        None,
    )


@pytest.mark.drives
def test_a_module_pytest_rewrites_runs_the_mutant_too(tmp_path: Path) -> None:
    """A project whose python_files takes every module (or a library file
    named like a test) has pytest's assertion rewriter load it, reading the
    file itself: it rewrites the mutant instead, and the module's loader is
    the rewriter, as in head's own runs."""
    root = tmp_path / "tree"
    tree(root)
    (root / "pytest.ini").write_text("[pytest]\npython_files = *.py\ntestpaths = tests\n")
    head, mutant = seen(root, None), seen(root, MUTANT)
    assert (head["double"], mutant["double"], mutant["again"]) == (10, 15, 15)
    assert {key for key in head if head[key] != mutant[key]} == {"double", "again"}
    assert (mutant["file"], mutant["getsource"]) == (CORE, "def double(n):\n    return n * 2\n")
    assert mutant["loader"] is False  # the rewriter's, as in head's own run


@pytest.mark.drives
def test_a_module_imported_before_the_plugin_stops_the_run_as_a_usage_error(tmp_path: Path) -> None:
    """A module loaded from the file before the gate's plugin (pytest
    imports pluggy itself; here a plugin named first) would run head's code
    under a mutant's name, and every mutant would survive: the run stops as
    pytest's usage error (exit 4), and bites writes the mutant over the tree
    for its second try."""
    root = tmp_path / "tree"
    tree(root)
    gate = root / ".site-gate"
    gate.mkdir()
    (gate / "early.py").write_text("import pkg.core\n")
    plugin = in_memory(MUTANT)
    for name, data in plugin.files.items():
        (gate / name).write_bytes(data)
    env = {
        **os.environ,
        "PROBE_OUT": str(tmp_path / "out.json"),
        "PYTHONPATH": f"{gate}{os.pathsep}{root}",
        "PYTEST_ADDOPTS": f"-p no:randomly -p no:cacheprovider -p early {plugin.env_for(str(gate))['PYTEST_ADDOPTS']}",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # as in seen()
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "tests"], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 4
    assert f"{root / 'pkg' / 'core.py'}: imported before the mutant could be loaded in its place" in done.stderr
    assert not (tmp_path / "out.json").exists()
