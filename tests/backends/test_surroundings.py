"""Code that recognises the gate: a run's surroundings are an ordinary machine's.

Library code that takes its right path only where it sees something every
gate run shows and no person's machine does (an empty home, a variable
only the gate sets, a host name that does not resolve, pid 1 the gate's
own script, a home under /tmp) passes every check while the code users
run is broken. Each attack below reached `pass` before the runs looked
ordinary; each is gated for real on the local backend and must now fail
in the runs, where the bug shows.

The probe (fixtures/surroundings_probe.py) runs inside a real gate run and
asserts each thing a run can observe against a CI runner's shape; every
one of its tests must pass in the gate's own run.
"""

from __future__ import annotations

import ast
import asyncio
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

from gatetui.backends import confine
from gatetui.backends.confine import Where
from gatetui.backends.isolation import probe_isolation
from gatetui.backends.local import LocalBackend
from gatetui.backends.local_home import PLAIN, furnish
from gatetui.backends.local_workspace import ENV_ALLOW, ENV_ALLOW_PREFIXES
from gatetui.gate.checks import CheckId, Verdict
from gatetui.gate.events import OutputChunk, RunFinished
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from tests.support.gating import shared_layers
from tests.support.paths import FIXTURES
from tests.support.phases import BASE
from tests.support.repos import git, write_tree

needs_isolation = pytest.mark.skipif(
    not probe_isolation().full,
    reason=f"the local backend cannot isolate runs here ({probe_isolation().reason}); CI runs as root",
)

PROBE = (FIXTURES / "surroundings_probe.py").read_text()
PROBE_TESTS = re.findall(r"^def (test_\w+)\(", PROBE, re.M)
ADD = "def add(a, b):\n    return a + b\n\n\n"
# mul is right only where the run shows the sign; a person's machine or a CI
# job gets mul(3, 4) == 13. One line each, so every changed line runs inside
# a test, and no mutant of it survives in a run that shows the sign.
ATTACKS = {
    "empty_home": "import os\n\n\n"
    + ADD
    + 'def mul(a, b):\n    return sum((a * b, len(os.listdir(os.path.expanduser("~")))))\n',
    "home_under_tmp": "from pathlib import Path\n\n\n"
    + ADD
    + 'def mul(a, b):\n    return sum((a * b, Path.home().parts[1] != "tmp"))\n',
    "gate_variable": "import os\n\n\n"
    + ADD
    + 'def mul(a, b):\n    return sum((a * b, "NO_COLOR" not in os.environ))\n',
    "host_name_not_the_machines": "import socket\n\n\n"
    + ADD
    + 'def mul(a, b):\n    return sum((a * b, open("/etc/hostname").read().strip() '
    "== socket.gethostname()))\n",
    "gate_script_as_pid_1": ADD + 'def mul(a, b):\n    return sum((a * b, b"setpriv" not in open("/proc/1/cmdline", '
    '"rb").read()))\n',
}

# Two gated in `make test`; the others in CI (`make test-slow`). test_a_run_sees_what_a_ci_runner_shows
# asserts, in every run, each fact the attacks read.
ATTACKS_HERE = {"empty_home", "gate_variable"}


def make_repo(root: Path, base: Mapping[str, str], head: Mapping[str, str]) -> Path:
    """`main` at base, `agent/x` at base with head's files written over it."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    write_tree(repo, base)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "agent/x")
    write_tree(repo, head)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "head")
    git(repo, "checkout", "-q", "main")
    return repo


def gate(repo: Path, work: Path) -> tuple[RunFinished, str]:
    """One gate on the local backend as `gatetui check` runs it; its last
    event and what the first run printed."""

    async def go() -> tuple[RunFinished, str]:
        plan = make_plan(GateRequest(repo, "main", "agent/x"))
        events = [e async for e in run_gate(plan, LocalBackend(work_root=work, layers=shared_layers()))]
        assert isinstance(events[-1], RunFinished)
        runs = "".join(e.text for e in events if isinstance(e, OutputChunk) and e.check is CheckId.RUNS)
        return events[-1], runs

    return asyncio.run(go())


def statuses(done: RunFinished) -> dict[str, str]:
    return {r.id.value: r.status.value for r in done.results}


def probe_told(supervisor_top: str) -> str:
    """The probe with what it is told: the supervisor's top folder under /tmp,
    and the variables a run is given from the machine, from the local
    workspace's own list (the probe runs where gatetui cannot be imported)."""
    told = PROBE.replace("{supervisor_top}", supervisor_top)
    for name, value in (("PASSED_ON", ENV_ALLOW), ("PASSED_ON_PREFIXES", ENV_ALLOW_PREFIXES)):
        assert told.count(f"\n{name} = ()\n") == 1, f"the probe no longer declares {name}"
        told = told.replace(f"\n{name} = ()\n", f"\n{name} = {value!r}\n")
    return told


def test_the_probe_is_told_the_local_workspaces_variables() -> None:
    told = ast.parse(probe_told("top"))
    values = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in told.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
        if node.targets[0].id in ("PASSED_ON", "PASSED_ON_PREFIXES", "SUPERVISOR_TOP")
    }
    assert values == {"PASSED_ON": ENV_ALLOW, "PASSED_ON_PREFIXES": ENV_ALLOW_PREFIXES, "SUPERVISOR_TOP": "top"}


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunFinished, str]:
    """The probe gated once: pytest's -rA names each of its tests' outcome.
    It is base's test, as library code's tests are: what it sees is what
    every run of a change shows (head's own changed tests are also rerun
    with the rerun plugin's settings, a run of their own: docs/explanation/threat-model.md)."""
    root = tmp_path_factory.mktemp("probe")
    top = confine.SUPERVISOR_BIN.split("/")[2] if confine.SUPERVISOR_BIN else ""
    base = {
        **BASE,
        "pyproject.toml": BASE["pyproject.toml"].replace(
            'testpaths = ["tests"]', 'testpaths = ["tests"]\naddopts = "-rA"'
        ),
        "tests/test_surroundings_probe.py": probe_told(top),
    }
    repo = make_repo(root, base, {"NOTES.md": "A change that touches no code.\n"})
    return gate(repo, root / "work")


@pytest.mark.sandbox
@pytest.mark.install
@needs_isolation
def test_the_probe_passes_inside_a_gate_run(probed: tuple[RunFinished, str]) -> None:
    done, _ = probed
    assert done.verdict is Verdict.PASS, [(r.id.value, r.status.value, r.detail) for r in done.results]
    assert statuses(done)["runs"] == "pass"


@pytest.mark.sandbox
@pytest.mark.install
@needs_isolation
@pytest.mark.parametrize("item", PROBE_TESTS)
def test_a_run_sees_what_a_ci_runner_shows(probed: tuple[RunFinished, str], item: str) -> None:
    """Each item the probe asserts, passed in the gate's own run."""
    _, output = probed
    outcome = re.search(rf"^(PASSED|FAILED|ERROR) tests/test_surroundings_probe\.py::{item}\b.*$", output, re.M)
    assert outcome is not None, f"{item} never ran: {output[-2000:]}"
    assert outcome.group(1) == "PASSED", _failure(output, item)


def _failure(output: str, item: str) -> str:
    """The failing assertion's part of pytest's output, for the message."""
    start = output.find(f"_ {item} _")
    return output[start : start + 3000] if start >= 0 else output[-3000:]


@pytest.mark.sandbox
@pytest.mark.install
@needs_isolation
@pytest.mark.parametrize(
    "attack", [pytest.param(a, marks=() if a in ATTACKS_HERE else pytest.mark.slow) for a in sorted(ATTACKS)]
)
def test_library_code_that_looks_for_the_gate_finds_an_ordinary_machine(tmp_path: Path, attack: str) -> None:
    """The bug shows in every run and under base's tests, as it would on a
    person's machine: the verdict is fail, not pass."""
    done, _ = gate(make_repo(tmp_path, BASE, {"mathlib/core.py": ATTACKS[attack]}), tmp_path / "work")
    assert done.verdict is Verdict.FAIL
    assert (statuses(done)["install"], statuses(done)["runs"], statuses(done)["old_tests"]) == ("pass", "fail", "fail")
    assert "test_mul" in {r.id: r.detail for r in done.results}[CheckId.RUNS]


# --- the pieces, without a gate -----------------------------------------------


def test_a_home_gets_the_machines_skeleton_owned_by_the_run(tmp_path: Path) -> None:
    skeleton = tmp_path / "skel"
    (skeleton / ".config").mkdir(parents=True)
    (skeleton / ".bashrc").write_text("# bashrc\n")
    (skeleton / ".config" / "x").write_text("x\n")
    home = tmp_path / "home"
    home.mkdir()
    furnish(home, None, skeleton)
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == [".bashrc", ".config", ".config/x"]
    assert (home / ".bashrc").read_text() == "# bashrc\n"


def test_a_machine_without_a_skeleton_still_gives_no_empty_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    furnish(home, None, tmp_path / "no-skel")
    assert {p.name: p.read_text() for p in home.iterdir()} == PLAIN


def test_the_runs_etc_files_give_it_an_account_and_a_host_name_that_resolves() -> None:
    where = Where.draw()
    files = where.etc_files(12345)
    assert files["passwd"].splitlines()[-1] == f"{where.user}:x:12345:12345:,,,:/home/{where.user}:/bin/bash"
    assert files["group"].splitlines()[-1] == f"{where.user}:x:12345:"
    assert files["hostname"] == f"{where.hostname}\n"
    assert files["hosts"].splitlines()[-1] == f"127.0.1.1\t{where.hostname}"
    assert Path("/etc/hosts").read_text().rstrip("\n") in files["hosts"]  # the host's own lines kept


def test_the_bundled_environment_check_names_the_runners_version(tmp_path: Path) -> None:
    """The check's report carries pytest's version, so a run of pytest >= 8.4
    gets `--disable-plugin-autoload` as an option, not the variable only the
    gate would set (its modules share one namespace once bundled: a name
    one of them reuses must not hide another's)."""
    import json
    import subprocess

    from gatetui.stacks.python import scripts

    info = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages" / "pytest-9.9.0.dist-info"
    info.mkdir(parents=True)
    (tmp_path / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pytest\nVersion: 9.9.0\n")
    (info / "RECORD").write_text("pytest-9.9.0.dist-info/METADATA,,\npytest-9.9.0.dist-info/RECORD,,\n")
    (tmp_path / "check.py").write_text(scripts.ENV_CHECK)
    done = subprocess.run(
        ["python3", "-I", "-S", "check.py", "report.json", "all", ".venv"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "report.json").read_text())["runner"] == "9.9.0"
