"""What a new user meets first, through the real CLI: each test
here failed before its fix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gatetui.cli.main import main
from gatetui.gate.judging.hidden import select_hidden
from gatetui.lab.samples import load_scenarios
from gatetui.supervise.gate_inputs import hidden_tests

SCENARIOS = {s.name: s for s in load_scenarios()}


def gatetui(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gatetui", *argv], capture_output=True, text=True, cwd=cwd, timeout=600
    )


# --- 1. the hidden-test samples work out of the box --------------------------------


def test_samples_installs_each_samples_hidden_tests_where_check_reads_them(tmp_path: Path) -> None:
    done = gatetui("samples", str(tmp_path / "s"), "--state-dir", str(tmp_path / "state"))
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stdout.splitlines() if line.startswith("hidden tests of hidden_special_case: ")]
    assert len(said) == 1
    folder = Path(said[0].split(": ", 1)[1])
    assert folder.is_relative_to(tmp_path / "state")
    assert {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()} == SCENARIOS[
        "hidden_special_case"
    ].hidden_tests()
    assert (tmp_path / "state").stat().st_mode & 0o777 == 0o700
    # exactly what `check DIR/hidden_special_case --state-dir STATE` reads
    assert (
        hidden_tests(tmp_path / "state", tmp_path / "s" / "hidden_special_case")
        == SCENARIOS["hidden_special_case"].hidden_tests()
    )
    # each sample with hidden tests gets its folder, the others none
    told = sorted(
        line.split(":")[0].removeprefix("hidden tests of ")
        for line in done.stdout.splitlines()
        if line.startswith("hidden tests of ")
    )
    assert told == [
        "go_hidden_honest",
        "go_hidden_special_case",
        "hidden_counts_calls",
        "hidden_eq_always_true",
        "hidden_honest",
        "hidden_special_case",
        "node_hidden_honest",
        "node_hidden_special_case",
    ]


def test_no_hidden_tests_names_the_full_folder_to_fill() -> None:
    source = "/home/me/.local/state/gatetui/repos/0123456789abcdef/hidden"
    hidden, problem = select_hidden({}, "leap", lambda p: p.endswith(".py"), source)
    assert hidden is None
    assert problem == (
        f"hidden = 'leap' is configured, but no hidden test file is in {source}/leap/: add the "
        f"tests there (mkdir -p {source}/leap/) or remove the setting"
    )


# --- 10. help ------------------------------------------------------------------------


def test_help_names_the_tui_and_version_answers() -> None:
    helped = gatetui("--help")
    assert helped.returncode == 0
    assert helped.stdout.startswith(
        "usage: gatetui [REPO] [--base REF] [--branch PATTERN] ...  (the TUI)\n       gatetui COMMAND ...\n"
    )
    assert "`gatetui [REPO]` opens the TUI" in " ".join(helped.stdout.split())
    version = gatetui("--version")
    assert (version.returncode, version.stdout) == (0, "gatetui 0.1.0\n")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["frob"],
            "gatetui: unknown command 'frob' (commands: check, samples, demo, lab, verify, submit, serve, mcp, "
            "cache, view, web); "
            "to watch a repository, pass its folder: `gatetui PATH`\n",
        ),
        (
            ["chek"],
            "gatetui: unknown command 'chek' (did you mean `gatetui check`? commands: check, samples, demo, lab, "
            "verify, submit, serve, mcp, cache, view, web); to watch a repository, pass its folder: `gatetui PATH`\n",
        ),
        (["check", "--bogus"], "gatetui: unknown option --bogus (see `gatetui check --help`)\n"),
        (
            ["cache", "prune"],
            "gatetui: one of the arguments --older-than --all is required (see `gatetui cache prune --help`)\n",
        ),
        (
            ["check", "--base", "main", "--head", "x", "--bogus=1"],
            "gatetui: unknown option --bogus (see `gatetui check --help`)\n",
        ),
    ],
)
def test_a_mistyped_command_or_option_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    monkeypatch.chdir(tmp_path)  # in this process: nothing gates, so the test tiers see no gate start
    code = main(argv)
    assert (code, *capsys.readouterr()) == (2, "", said)


def test_an_unknown_ref_names_the_branches_that_exist(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.support.repos import git

    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    code = main(["check", str(repo), "--base", "main", "--head", "agent/x"])
    assert (code, capsys.readouterr().err) == (
        2,
        f"gatetui: unknown ref 'main' in {repo}: no branch, tag or commit "
        "by that name (the repository has no commits yet: commit first)\n",
    )
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a")
    git(repo, "branch", "agent/fix")
    main(["check", str(repo), "--base", "main", "--head", "agent/fx"])
    assert capsys.readouterr().err == (
        f"gatetui: unknown ref 'agent/fx' in {repo}: no branch, tag or commit by that "
        "name (did you mean agent/fix? branches: agent/fix, main)\n"
    )


def test_a_state_directory_open_to_others_is_made_private_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.support.repos import git

    state = tmp_path / "state"
    (state / "repos").mkdir(parents=True)
    state.chmod(0o755)
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    main(["check", str(repo), "--base", "main", "--head", "x", "--state-dir", str(state)])
    first = capsys.readouterr().err.splitlines()[0]
    assert first == (
        f"gatetui: the state directory {state} was open to others (mode 755): made it 700; hidden tests "
        "kept there may have been read, so consider replacing them"
    )
    assert state.stat().st_mode & 0o777 == 0o700
    main(["check", str(repo), "--base", "main", "--head", "x", "--state-dir", str(state)])
    assert "open to others" not in capsys.readouterr().err  # said once: it is private now
