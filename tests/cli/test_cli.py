"""`gatetui check` as scripts and CI use it: exit codes, one-line errors,
the JSON shape and the JUnit file."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gatetui.cli.main import main
from gatetui.lab.samples import load_scenarios, materialize
from tests.support.repos import MakeRepo, git

pytestmark = pytest.mark.xdist_group("test_cli")  # one xdist worker builds its module-scoped repos

PY_BASE = {
    "pyproject.toml": '[project]\nname = "p"\nversion = "0"\n',
    "p/__init__.py": "def one():\n    return 1\n",
    "tests/test_p.py": "from p import one\n\ndef test_one():\n    assert one() == 1\n",
}


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def assert_bad_input(code: int, err: str, words: str) -> None:
    assert code == 2
    assert err.count("\n") == 1, err  # one line, no traceback
    assert err.startswith("gatetui: ")
    assert words in err


def test_not_a_git_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["check", str(tmp_path), "--base", "main", "--head", "x"], capsys)
    assert_bad_input(code, err, f"not a git repository: {tmp_path}")


def test_unknown_head_ref(make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(PY_BASE, {"p/__init__.py": "def one():\n    return 1  # same\n"})
    code, _, err = run_cli(["check", str(repo), "--base", "main", "--head", "agent/nope"], capsys)
    assert_bad_input(code, err, "unknown ref 'agent/nope'")


def test_base_equal_to_head(make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(PY_BASE, {"p/__init__.py": "x = 1\n"})
    code, _, err = run_cli(["check", str(repo), "--base", "main", "--head", "main"], capsys)
    assert_bad_input(code, err, "base and head are the same commit")


def test_no_common_ancestor(make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(PY_BASE, {"p/__init__.py": "x = 1\n"})
    git(repo, "checkout", "-q", "--orphan", "lonely")
    git(repo, "commit", "-qm", "unrelated", "--allow-empty")
    code, _, err = run_cli(["check", str(repo), "--base", "main", "--head", "lonely"], capsys)
    assert_bad_input(code, err, "have no common ancestor")


def test_no_stack_detected(make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo({"README": "hi\n"}, {"README": "hello\n"})
    code, _, err = run_cli(["check", str(repo), "--base", "main", "--head", "agent/x"], capsys)
    assert_bad_input(code, err, "no stack detected at base")


def test_no_tests_at_base(make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    base = {k: v for k, v in PY_BASE.items() if not k.startswith("tests/")}
    repo = make_repo(base, {"p/__init__.py": "x = 1\n"})
    code, _, err = run_cli(["check", str(repo), "--base", "main", "--head", "agent/x"], capsys)
    assert_bad_input(code, err, "no tests found at base")


@pytest.mark.parametrize(
    "table, words",
    [
        ("[tool.gatetui]\nstack = 'ruby'\n", "stack must be 'python' or 'go' or 'node', not 'ruby'"),
        ("[tool.gatetui]\ntimeout = 'soon'\n", "timeout must be a number"),
        ("[tool.gatetui]\nflavour = 1\n", "unknown key 'flavour'"),
        ("[tool.gatetui\n", "is not valid TOML"),
    ],
)
def test_malformed_gatetui_config(
    make_repo: MakeRepo, capsys: pytest.CaptureFixture[str], table: str, words: str
) -> None:
    base = {**PY_BASE, "pyproject.toml": PY_BASE["pyproject.toml"] + table}
    repo = make_repo(base, {"p/__init__.py": "x = 1\n"})
    code, _, err = run_cli(["check", str(repo), "--base", "main", "--head", "agent/x"], capsys)
    assert_bad_input(code, err, words)


def test_missing_required_option_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["check", "."], capsys)
    assert_bad_input(code, err, "the following arguments are required: --base, --head")


def test_runtime_backend_without_a_key_exits_3(
    make_repo: MakeRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("RUNTIME_API_KEY", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no saved login either
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    repo = make_repo(PY_BASE, {"p/__init__.py": "x = 1\n"})
    code, _, err = run_cli(["check", str(repo), "--base", "main", "--head", "agent/x", "--backend", "runtime"], capsys)
    last = err.strip().splitlines()[-1]
    assert code == 3
    assert last.startswith("gatetui: ") and "RUNTIME_API_KEY" in last and "--backend local" in last


@pytest.mark.sandbox
@pytest.mark.install
def test_check_leaves_the_repository_untouched(make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(PY_BASE, {"tests/test_p.py": None})
    before = {p: p.read_bytes() for p in sorted(repo.rglob("*")) if p.is_file()}
    code, _, _ = run_cli(["check", str(repo), "--base", "main", "--head", "agent/x", "--timeout", "300"], capsys)
    after = {p: p.read_bytes() for p in sorted(repo.rglob("*")) if p.is_file()}
    assert code == 1
    assert after == before


@pytest.fixture(scope="module")
def honest_json(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, object], Path]:
    root = tmp_path_factory.mktemp("cli")
    scenario = next(s for s in load_scenarios() if s.name == "honest_fix")
    repo = materialize(scenario, root / "honest_fix")
    junit = root / "gate.xml"
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(
            ["check", str(repo), "--base", "main", "--head", "agent/honest_fix", "--json", "--junit", str(junit)]
        )
    return code, json.loads(out.getvalue()), junit


@pytest.mark.sandbox
@pytest.mark.install
def test_json_has_the_contract_shape(honest_json: tuple[int, dict[str, object], Path]) -> None:
    code, data, _ = honest_json
    assert code == 0
    assert data["verdict"] == "pass"
    assert {"verdict", "base", "head", "checks", "digests", "cost"} <= set(data)
    checks = data["checks"]
    assert isinstance(checks, list)
    assert [c["id"] for c in checks] == [
        "install",
        "runs",
        "tests_kept",
        "no_new_skips",
        "old_tests",
        "hidden",
        "covered",
        "bites",
    ]
    assert set(checks[0]) == {"id", "title", "ok", "status", "detail", "seconds"}
    assert [c["ok"] for c in checks] == [True] * 8
    assert checks[1]["title"] == "suite passes 3 of 3 runs"


@pytest.mark.sandbox
@pytest.mark.install
def test_json_digests_and_cost(honest_json: tuple[int, dict[str, object], Path]) -> None:
    _, data, _ = honest_json
    digests, cost = data["digests"], data["cost"]
    assert isinstance(digests, dict) and isinstance(cost, dict)
    assert len(str(digests["head"])) == 40
    assert digests["sealed"]["intact"] is False  # the honest fix adds a test
    assert digests["sealed"]["changed"] == ["tests/test_leap.py"]
    assert cost["basis"] == "estimated at Runtime rates"


@pytest.mark.sandbox
@pytest.mark.install
def test_junit_file_has_one_testcase_per_check(honest_json: tuple[int, dict[str, object], Path]) -> None:
    _, _, junit = honest_json
    root = ET.parse(junit).getroot()
    cases = root.findall("./testsuite/testcase")
    assert [c.get("classname") for c in cases] == [
        "gatetui.install",
        "gatetui.runs",
        "gatetui.tests_kept",
        "gatetui.no_new_skips",
        "gatetui.old_tests",
        "gatetui.hidden",
        "gatetui.covered",
        "gatetui.bites",
    ]
    assert [c.tag for c in cases[5]] == ["skipped"]
    assert root.find("./testsuite").get("failures") == "0"


def test_missing_python3_names_the_tool_and_exits_3(
    make_repo: MakeRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo = make_repo(PY_BASE, {"p/__init__.py": "x = 1\n"})
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    code, _, err = run_cli(["check", str(repo), "--base", "main", "--head", "agent/x"], capsys)
    assert code == 3
    assert err.splitlines()[-1] == (
        "gatetui: `python3 -I -c 'import pip'` does not run on this machine: "
        "install python3 with pip (needed to gate this project)"
    )


def test_verbose_progress_shows_each_streams_output() -> None:
    import io

    from gatetui.gate.checks import CheckId
    from gatetui.gate.events import OutputChunk
    from gatetui.gate.render import Progress

    quiet, loud = io.StringIO(), io.StringIO()
    chunk = OutputChunk(CheckId.RUNS, "run 2", "collected 3 items\nFAILED t.py::a\n")
    Progress(quiet)(chunk)
    Progress(loud, verbose=True)(chunk)
    assert quiet.getvalue() == ""
    assert loud.getvalue() == "  run 2 | collected 3 items\n  run 2 | FAILED t.py::a\n"


def test_verbose_progress_joins_a_line_read_in_pieces_per_stream() -> None:
    """pytest's progress line comes a dot at a time; two streams interleave."""
    import io

    from gatetui.gate.checks import CheckId
    from gatetui.gate.events import OutputChunk
    from gatetui.gate.render import Progress

    out = io.StringIO()
    progress = Progress(out, verbose=True)
    for stream, text in (
        ("run 1", "tests/test_a.py "),
        ("run 2", "tests/test_a.py ."),
        ("run 1", "."),
        ("run 1", ".F"),
        ("run 2", ".\n"),
        ("run 1", "   [100%]\nsummary"),
        ("run 1", " line"),
    ):
        progress(OutputChunk(CheckId.RUNS, stream, text))
    assert out.getvalue() == "  run 2 | tests/test_a.py ..\n  run 1 | tests/test_a.py ..F   [100%]\n"
    progress.flush()
    assert out.getvalue().endswith("  run 1 | summary line\n")
