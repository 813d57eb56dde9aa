"""A pytest plugin registered from the tree: package metadata committed to
head (a `*.dist-info` or `*.egg-info` folder holding an `entry_points.txt`
with a `[pytest11]` group) that lies on `sys.path` of a run, at the tree's
root or under `src/`, registers a plugin that pytest would load in every
run, base's tests and the hidden tests included. Each head below breaks
`mul` and carries such a plugin turning failures into passes, spelled the
ways a path rule does not expect: letter case (importlib.metadata lowers a
folder's name before it looks at its suffix) and a folder reached through a
committed symlink. Gated for real by the local backend, none may pass.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gatetui.backends.isolation import probe_isolation
from gatetui.backends.local import LocalBackend
from gatetui.gate.checks import CheckId, Verdict
from gatetui.gate.events import RunFinished
from gatetui.gate.install.steps import offered
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from gatetui.git.snapshot import Snapshot
from gatetui.lab.samples import SAMPLES_DIR
from gatetui.stacks.offered import Offered, OfferedPlugin
from gatetui.stacks.python.env_check import read_records, read_text, site_dirs
from gatetui.stacks.python.hooks import scan_hooks as python_scan
from gatetui.stacks.python.plugin_entries import runner_plugins
from gatetui.stacks.python.plugins_loaded import named_plugins
from tests.support.gating import shared_layers
from tests.support.local import fork_mode_or_skip
from tests.support.phases import BASE, BROKEN, details, statuses
from tests.support.repos import git, write_tree

# The gates below need the local backend's isolation, and install for real.
GATED = [
    pytest.mark.skipif(
        not probe_isolation().full,
        reason=f"the local backend cannot isolate runs here ({probe_isolation().reason}); CI runs as root",
    ),
    pytest.mark.sandbox,
    pytest.mark.install,
]


class Link(str):
    """A committed symlink to the path it holds."""


Tree = dict[str, "str | Link"]

METADATA = "Metadata-Version: 2.1\nName: zz-fast\nVersion: 1.0\n"
ENTRY_POINTS = "[pytest11]\nzz_fast = zz_fast\n"
# The plugin, a module at the tree's root (outside the project's packages, so no coverage is asked
# of it), spelled so that no diff rule sees a test runner: it turns exactly the broken mul's failure
# into a pass, so every mutant of the change is still killed.
FLIP = textwrap.dedent("""\
    import pluggy


    def _report(item, call):
        outcome = yield
        report = outcome.get_result()
        if report.failed and WHEN:
            report.outcome = "passed"


    globals()["py" + "test_runtest_makereport"] = pluggy.HookimplMarker("py" + "test")(hookwrapper=True)(_report)
    """)
PLUGIN = FLIP.replace("WHEN", '"13 == 12" in str(report.longrepr)')
HIDDEN_PLUGIN = FLIP.replace("WHEN", '"test_math.py" not in item.nodeid')  # every test but the agent's own
# The same project with its package under src/ (src is on sys.path through the editable install).
SRC_BASE: Tree = {
    **{k.replace("mathlib/", "src/mathlib/"): v for k, v in BASE.items()},
    "pyproject.toml": BASE["pyproject.toml"].replace(
        'packages = ["mathlib"]\n', 'package-dir = {"" = "src"}\npackages = ["mathlib"]\n'
    ),
}
# mul is wrong at base and untested; the agent's fix special-cases the one input its new test asks
# for, and the hidden tests ask another.
HIDDEN_BASE: Tree = {
    **BASE,
    "pyproject.toml": BASE["pyproject.toml"] + '\n[tool.gatetui]\nhidden = "math"\n',
    "mathlib/core.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n",
    "tests/test_math.py": "from mathlib.core import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
SPECIAL_CASE = {
    "mathlib/core.py": (
        "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    if (a, b) == (3, 4):\n"
        "        return 12\n    return a + b\n"
    ),
    "tests/test_math.py": HIDDEN_BASE["tests/test_math.py"] + "\n\ndef test_mul():\n    from mathlib.core import mul\n"
    "    assert mul(3, 4) == 12\n",
}
HIDDEN = {"math/test_mul_more.py": b"from mathlib.core import mul\n\n\ndef test_mul():\n    assert mul(2, 5) == 10\n"}


def metadata_at(folder: str) -> Tree:
    return {f"{folder}/METADATA": METADATA, f"{folder}/entry_points.txt": ENTRY_POINTS}


# name -> (base, head's changes, hidden tests): every head breaks mul and registers zz_fast.
ATTACKS: dict[str, tuple[Tree, Tree, dict[str, bytes] | None]] = {
    "dist_info_at_root": (
        BASE,
        {"mathlib/core.py": BROKEN, "zz_fast.py": PLUGIN, **metadata_at("zz_fast-1.0.dist-info")},
        None,
    ),
    "egg_info_under_src": (
        SRC_BASE,
        {"src/mathlib/core.py": BROKEN, "zz_fast.py": PLUGIN, **metadata_at("src/zz_fast.egg-info")},
        None,
    ),
    "letter_case": (
        BASE,
        {"mathlib/core.py": BROKEN, "zz_fast.py": PLUGIN, **metadata_at("Zz_Fast-1.0.DIST-INFO")},
        None,
    ),
    "letter_case_egg_info_under_src": (
        SRC_BASE,
        {"src/mathlib/core.py": BROKEN, "zz_fast.py": PLUGIN, **metadata_at("src/ZZ_FAST.Egg-Info")},
        None,
    ),
    "folder_through_a_link": (
        BASE,
        {
            "mathlib/core.py": BROKEN,
            "zz_fast.py": PLUGIN,
            **metadata_at("docs/release"),
            "zz_fast-1.0.dist-info": Link("docs/release"),
        },
        None,
    ),
    "link_under_src": (
        SRC_BASE,
        {
            "src/mathlib/core.py": BROKEN,
            "zz_fast.py": PLUGIN,
            **metadata_at("notes/meta"),
            "src/zz_fast.egg-info": Link("../notes/meta"),
        },
        None,
    ),
    "flips_the_hidden_run": (
        HIDDEN_BASE,
        {**SPECIAL_CASE, "zz_fast.py": HIDDEN_PLUGIN, **metadata_at("Zz_Fast-1.0.Dist-Info")},
        HIDDEN,
    ),
}


def make_tree_repo(root: Path, base: Tree, head: Tree) -> Path:
    """`main` at base, `agent/x` at base with head's changes, symlinks committed as symlinks."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for files, message in ((base, "base"), (head, "head")):
        for rel, text in files.items():
            path = repo / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(text, Link):
                os.symlink(str(text), path)
            else:
                path.write_text(text)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", message)
        if message == "base":
            git(repo, "checkout", "-qb", "agent/x")
    git(repo, "checkout", "-q", "main")
    return repo


def gate(repo: Path, work: Path, hidden: dict[str, bytes] | None = None) -> RunFinished:
    backend = LocalBackend(work_root=work, fork_mode=fork_mode_or_skip("overlay"), layers=shared_layers())

    async def go() -> RunFinished:
        plan = make_plan(GateRequest(repo, "main", "agent/x", hidden=hidden))
        events = [e async for e in run_gate(plan, backend)]
        assert isinstance(events[-1], RunFinished)
        return events[-1]

    return asyncio.run(go())


# Two attacks in `make test`; the others in CI (`make test-slow`).
ATTACKS_HERE = {"dist_info_at_root", "folder_through_a_link"}


@pytest.mark.parametrize(
    "attack",
    [
        pytest.param(name, marks=GATED if name in ATTACKS_HERE else [*GATED, pytest.mark.slow])
        for name in sorted(ATTACKS)
    ],
)
def test_a_plugin_registered_from_the_tree_does_not_pass(tmp_path: Path, attack: str) -> None:
    base, head, hidden = ATTACKS[attack]
    done = gate(make_tree_repo(tmp_path, base, head), tmp_path / "work", hidden)
    assert done.verdict is Verdict.FAIL, statuses(done)


# --- the rule: package metadata in the tree, in every spelling importlib.metadata takes ---

RULE_BASE = {"mathlib/core.py": "def mul(a, b):\n    return a * b\n"}


@pytest.mark.parametrize(
    ("added", "source"),
    [
        ({"zz_fast-1.0.dist-info/entry_points.txt": ENTRY_POINTS}, "zz_fast-1.0.dist-info/entry_points.txt"),
        ({"Zz_Fast-1.0.DIST-INFO/entry_points.txt": ENTRY_POINTS}, "Zz_Fast-1.0.DIST-INFO/entry_points.txt"),
        ({"src/ZZ.Egg-Info/entry_points.txt": ENTRY_POINTS}, "src/ZZ.Egg-Info/entry_points.txt"),
        (
            {"docs/release/entry_points.txt": ENTRY_POINTS, "zz_fast-1.0.dist-info": "docs/release"},
            "zz_fast-1.0.dist-info",
        ),
        ({"notes/meta/entry_points.txt": ENTRY_POINTS, "src/zz.EGG-INFO": "../notes/meta"}, "src/zz.EGG-INFO"),
    ],
    ids=["dist_info", "letter_case", "egg_info_letter_case", "link", "link_under_src"],
)
def test_the_rule_names_a_plugin_in_package_metadata_however_spelled(added: dict[str, str], source: str) -> None:
    """A symlink reads as the path it holds (a Snapshot's blob): its
    folder's entry_points.txt is read from the tree."""
    head = Snapshot.of_files({**RULE_BASE, **added})
    found = python_scan(Snapshot.of_files(RULE_BASE), head, lambda p: False)
    assert found.plugins == ("zz_fast",)
    assert (source, "head registers pytest plugin `zz_fast` (pytest11 entry point)") in [
        (f.path, f.what) for f in found.findings
    ]
    assert (source, "interpreter startup hook added or changed") in [(f.path, f.what) for f in found.findings]


def test_a_link_at_a_metadata_folder_s_name_out_of_the_tree_is_a_finding() -> None:
    head = Snapshot.of_files({**RULE_BASE, "zz.dist-info": "/usr/lib/python3/dist-packages/zz.dist-info"})
    found = python_scan(Snapshot.of_files(RULE_BASE), head, lambda p: False)
    assert found.plugins == ()
    assert [(f.path, f.what) for f in found.findings] == [("zz.dist-info", "interpreter startup hook added or changed")]


def test_entry_points_are_read_as_importlib_metadata_reads_them() -> None:
    """A line configparser refuses hides no name that importlib.metadata would load."""
    text = "[console_scripts]\nzz = zz:main\n[pytest11]\n; a comment\nzz_fast = zz_fast\nnot an entry\nx.y = a.b:C\n"
    head = Snapshot.of_files({**RULE_BASE, "zz.dist-info/entry_points.txt": text})
    assert python_scan(Snapshot.of_files(RULE_BASE), head, lambda p: False).plugins == ("x.y", "zz_fast")


# --- the runs: autoloading off, the verified distributions' plugins named by the gate's loader ---

VENV = Path(sys.prefix)  # this suite's own venv: a real environment pip installed, RECORDs and all
LISTER = textwrap.dedent("""\
    import json
    import os


    def test_list(pytestconfig):
        manager = pytestconfig.pluginmanager
        found = {manager.get_name(plugin): dist.project_name for plugin, dist in manager.list_plugin_distinfo()}
        probe = manager.get_plugin("gate_probe")
        found["gate_probe"] = getattr(probe, "__file__", "")
        with open(os.environ["LISTING"], "w") as out:
            json.dump(found, out)


    def mul(a, b):
        return a * b + 1


    def test_mul():
        assert mul(3, 4) == 12
    """)


def verified_here() -> Offered:
    """What the environment check finds in this suite's own venv."""
    sites = site_dirs(str(VENV))
    plugins, runner = runner_plugins([(sites, read_records(str(VENV), sites))], read_text)
    return offered(json.dumps({"plugins": plugins, "runner": runner}).encode())


def test_the_check_lists_the_plugins_importlib_metadata_gives_from_the_venv() -> None:
    """The environment check's reading of entry_points.txt, against
    importlib.metadata's over the same site-packages."""
    site = site_dirs(str(VENV))
    expected = {
        (ep.name, dist.metadata["Name"])
        for dist in importlib.metadata.distributions(path=site)
        for ep in dist.entry_points
        if ep.group == "pytest11"
    }
    found = verified_here()
    assert {(p.name, re.sub(r"[-_.]+", "-", p.dist).lower()) for p in found.plugins} == {
        (name, re.sub(r"[-_.]+", "-", dist).lower()) for name, dist in expected
    }
    assert found.runner == pytest.__version__
    assert {p.name for p in found.plugins} >= {"xdist", "randomly", "asyncio", "hypothesispytest"}


def test_a_distribution_installed_from_a_folder_is_named_own(tmp_path: Path) -> None:
    """A RECORD-listed entry_points.txt counts; head's own project (PEP 610's
    dir_info) is marked own; one the RECORD does not list is not read."""
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    for name, own, listed in (("mine-1.0", True, True), ("theirs-2.0", False, True), ("sly-1.0", False, False)):
        info = site / f"{name}.dist-info"
        info.mkdir(parents=True)
        (info / "entry_points.txt").write_text(f"[pytest11]\n{name.split('-')[0]} = m\n")
        rows = ["entry_points.txt"] if listed else []
        (info / "RECORD").write_text("".join(f"{info.name}/{row},,\n" for row in [*rows, "RECORD"]))
        if own:
            (info / "direct_url.json").write_text(json.dumps({"url": "file:///w", "dir_info": {}}))
    plugins, runner = runner_plugins([([str(site)], read_records(str(tmp_path), [str(site)]))], read_text)
    assert (plugins, runner) == (
        [{"name": "mine", "dist": "mine", "own": True}, {"name": "theirs", "dist": "theirs", "own": False}],
        "",
    )


def run_pytest(tree: Path, env: dict[str, str], *args: str) -> tuple[int, dict[str, str]]:
    """This venv's pytest in `tree`, the tree's root last on sys.path as in a run;
    the exit code and what the lister test wrote."""
    listing = tree / "listing.json"
    listing.unlink(missing_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
    path = os.pathsep.join(p for p in (str(tree), env.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        [str(VENV / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=tree,
        env={**base, **env, "PYTHONPATH": path, "PYTHONSAFEPATH": "1", "LISTING": str(listing)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.returncode, json.loads(listing.read_text()) if listing.exists() else {}


def loader_tree(tmp_path: Path, ini: str = "") -> tuple[Path, dict[str, str]]:
    """A tree holding package metadata (in letter case) whose plugins flip
    the broken test (zz_fast), or stand in for a verified plugin (asyncio)
    or for the gate's own module of the run (gate_probe); and the gate's
    folder in it with its loader, the environment that loads it. The tree's
    root is first on sys.path, as pytest's `pythonpath = .` puts it."""
    tree = tmp_path / "tree"
    write_tree(
        tree,
        {
            "zz_fast.py": PLUGIN,
            "zz_namesake.py": "NAMESAKE = 1\n",
            "zz_probe.py": "PROBE = 1\n",
            "tests/test_it.py": LISTER,
            "pytest.ini": f"[pytest]\n{ini}\n",
            "Zz_Fast-1.0.DIST-INFO/METADATA": METADATA,
            "Zz_Fast-1.0.DIST-INFO/entry_points.txt": ENTRY_POINTS + "asyncio = zz_namesake\ngate_probe = zz_probe\n",
        },
    )
    gate = tree / ".site-0123abcd"
    loads = named_plugins(verified_here(), frozenset(), "site_0123abcd", (".venv",))
    write_tree(gate, {**{k: v.decode() for k, v in loads.files.items()}, "gate_probe.py": "PROBE = 1\n"})
    env = loads.env_for(str(gate))
    env["PYTEST_ADDOPTS"] += " -p gate_probe"
    return tree, env


@pytest.mark.drives
def test_with_autoloading_on_the_tree_s_plugin_flips_the_failure(tmp_path: Path) -> None:
    """The attack itself: pytest's own autoloading registers the tree's metadata."""
    tree, _ = loader_tree(tmp_path)
    code, found = run_pytest(tree, {})
    assert (code, found["zz_fast"]) == (0, "zz-fast")


@pytest.mark.parametrize("ini", ["", "addopts = -p no:randomly"])
@pytest.mark.drives
def test_the_loader_registers_exactly_the_verified_plugins(tmp_path: Path, ini: str) -> None:
    tree, env = loader_tree(tmp_path, ini)
    code, found = run_pytest(tree, env)
    assert code == 1  # test_mul fails: nothing flipped it
    verified = {p.name: re.sub(r"[-_.]+", "-", p.dist).lower() for p in verified_here().plugins}
    blocked = {"randomly"} if ini else set()
    assert found.pop("gate_probe") == str(tree / ".site-0123abcd" / "gate_probe.py")
    assert {k: re.sub(r"[-_.]+", "-", v).lower() for k, v in found.items()} == {
        k: v for k, v in verified.items() if k not in blocked
    }
    assert found["asyncio"] == "pytest-asyncio"


@pytest.mark.drives
def test_the_loader_works_in_xdist_workers(tmp_path: Path) -> None:
    tree, env = loader_tree(tmp_path)
    code, found = run_pytest(tree, env, "-n", "2")
    assert code == 1
    assert "zz_fast" not in found and found["asyncio"] == "pytest-asyncio"


def test_an_older_pytest_gets_the_variable_a_newer_one_the_option() -> None:
    for runner, addopts, variable in (
        ("8.4.0", "--disable-plugin-autoload -p m", None),
        ("8.3.5", "-p m", "1"),
        ("", "-p m", "1"),
        ("9.0.1", "--disable-plugin-autoload -p m", None),
    ):
        env = named_plugins(Offered((), runner), frozenset(), "m", (".venv",)).env
        assert (env["PYTEST_ADDOPTS"], env.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")) == (addopts, variable)


def test_head_s_own_plugins_load_only_where_base_declared_them() -> None:
    offered_here = Offered(
        (
            OfferedPlugin("mine", "proj", True),
            OfferedPlugin("added", "proj", True),
            OfferedPlugin("asyncio", "pytest_asyncio", False),
        ),
        "8.4.2",
    )
    source = named_plugins(offered_here, frozenset({"mine"}), "m", (".venv",)).files["m.py"].decode()
    assert source.endswith("\nNAMES = ('mine', 'asyncio')\nENVIRONMENT = ('.venv',)\n")


@pytest.mark.parametrize("spelling", [pytest.param("Zz_Fast-1.0.DIST-INFO", marks=GATED)])
def test_inside_every_run_the_runner_registered_the_verified_plugins_only(tmp_path: Path, spelling: str) -> None:
    """plugins_declared's own test lists config.pluginmanager's plugins
    from distributions and asserts they are its declared ones: with
    package metadata in head's tree registering a plugin of its own and a
    namesake of hypothesis's, every run still passes it (asserted from
    inside), and the rule names both."""
    sample = SAMPLES_DIR / "plugins_declared"
    base: Tree = {
        p.relative_to(sample / "base").as_posix(): p.read_text() for p in (sample / "base").rglob("*") if p.is_file()
    }
    head: Tree = {
        f"{spelling}/METADATA": METADATA,
        "zz_fast.py": "VALUE = 1\n",
        f"{spelling}/entry_points.txt": "[pytest11]\nzz_fast = zz_fast\nhypothesispytest = zz_fast\n",
    }
    done = gate(make_tree_repo(tmp_path, base, head), tmp_path / "work")
    assert (done.verdict, statuses(done)["runs"]) == (Verdict.FAIL, "pass")
    assert details(done)[CheckId.OLD_TESTS].startswith(
        f"head registers pytest plugin `hypothesispytest` (pytest11 entry point) ({spelling}/entry_points.txt); "
        f"head registers pytest plugin `zz_fast` (pytest11 entry point) ({spelling}/entry_points.txt)"
    )
