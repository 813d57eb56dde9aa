"""`gatetui verify RECORD`: 0 intact, 1 altered, 2 unreadable, one line each."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from gatetui.supervise.store import Store
from gatetui.supervise.verify import add_verify_parser, cmd_verify

RECORD = {"run_id": "r1", "verdict": "review", "head": "h" * 40, "checks": []}


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Path, Path]:
    """A state directory and a record the gate sealed in it."""
    state = tmp_path / "state"
    path = Store.open(state).save_run(tmp_path / "repo", dict(RECORD))
    return state, path


def verify(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="gatetui")
    add_verify_parser(parser.add_subparsers(dest="command"))
    code = cmd_verify(parser.parse_args(["verify", *argv]))
    out, err = capsys.readouterr()
    return code, out, err


def test_an_untouched_record_is_intact(stored: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    state, path = stored
    assert verify([str(path), "--state-dir", str(state)], capsys) == (
        0,
        f"intact: {path}: the seal matches: the record is as the gate wrote it\n",
        "",
    )


def test_an_edited_verdict_is_altered(stored: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    state, path = stored
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "verdict": "pass"}))
    code, out, err = verify([str(path), "--state-dir", str(state)], capsys)
    assert (code, out) == (1, "")
    assert err == f"altered: {path}: the seal does not match: the record was altered, or sealed with another key\n"


def test_a_record_without_its_seal_is_altered(stored: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    state, path = stored
    record = json.loads(path.read_text())
    del record["seal"]
    path.write_text(json.dumps(record))
    assert verify([str(path), "--state-dir", str(state)], capsys)[:2] == (1, "")


@pytest.mark.parametrize(
    "content, words",
    [
        (None, "cannot read"),
        ("{not json", "is not JSON: not a verdict record"),
        ('["a"]', "is not a verdict record (no run_id, verdict or seal)"),
    ],
)
def test_an_unreadable_record_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, words: str
) -> None:
    path = tmp_path / "record.json"
    if content is not None:
        path.write_text(content)
    code, out, err = verify([str(path), "--state-dir", str(tmp_path)], capsys)
    assert (code, out) == (2, "")
    assert words in err and err.count("\n") == 1


def test_a_state_dir_without_the_key_is_bad_input_and_left_as_it_was(
    stored: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, path = stored
    other = tmp_path / "elsewhere"
    code, _, err = verify([str(path), "--state-dir", str(other)], capsys)
    assert (code, other.exists()) == (2, False)
    assert err == (
        f"gatetui: no verdict key in {other}: pass --state-dir with the supervisor's "
        "state directory that wrote the record\n"
    )


def test_without_state_dir_the_key_beside_the_record_is_used(
    stored: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record lies in its state directory (repos/KEY/runs/ID.json): its
    key is found there, even when the default state directory has another."""
    _, path = stored
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    Store.open(tmp_path / "xdg" / "gatetui").save_run(tmp_path / "other", dict(RECORD))  # makes another key
    code, out, _ = verify([str(path)], capsys)
    assert (code, out.startswith(f"intact: {path}: ")) == (0, True)


def test_a_record_away_from_its_state_dir_is_never_a_false_alarm(
    stored: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copied elsewhere, checked with the default state directory's key,
    which never sealed it: the gate cannot tell, and says which option helps."""
    state, path = stored
    copy = tmp_path / "copy.json"
    copy.write_bytes(path.read_bytes())
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    Store.open(tmp_path / "xdg" / "gatetui").save_run(tmp_path / "other", dict(RECORD))
    code, _, err = verify([str(copy)], capsys)
    assert code == 2
    assert err == (
        f"gatetui: cannot tell: {copy} does not match the key in {tmp_path / 'xdg' / 'gatetui'}, which "
        "may not be the state directory that wrote it; pass --state-dir with that one\n"
    )
    assert verify([str(copy), "--state-dir", str(state)], capsys)[0] == 0


def test_no_key_anywhere_says_which_option_to_pass(
    stored: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, path = stored
    copy = tmp_path / "copy.json"
    copy.write_bytes(path.read_bytes())
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "empty"))
    code, _, err = verify([str(copy)], capsys)
    assert code == 2
    assert err == (
        f"gatetui: no verdict key found for {copy}: it is not inside a state directory and "
        f"{tmp_path / 'empty' / 'gatetui'} holds no key; pass --state-dir with the supervisor's state "
        "directory that wrote it\n"
    )
    assert not (tmp_path / "empty").exists()
