"""`gatetui verify RECORD`: was a stored verdict altered since the gate wrote it?

A verdict record carries an HMAC made with the key in the supervisor's state
directory. Verifying needs that same directory: a fresh one would make a new
key and call every record altered, so a directory without a key is refused.
Exit 0 intact, 1 altered, 2 the record or the state directory cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from gatetui.errors import ExitCode, GateError
from gatetui.supervise.store import Store, default_state_dir

# What every verdict record holds: a sealed JSON object without these is not one.
RECORD_KEYS = ("run_id", "verdict")


def add_verify_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser("verify", help="check a stored verdict against its seal")
    parser.add_argument("record", type=Path, help="a verdict record (STATE_DIR/repos/KEY/runs/ID.json)")
    parser.add_argument(
        "--state-dir",
        type=Path,
        metavar="DIR",
        help="the supervisor's state directory (default: $XDG_STATE_HOME/gatetui)",
    )
    return parser


def cmd_verify(args: argparse.Namespace) -> int:
    try:
        code, message = verify_record(args.record, args.state_dir)
    except GateError as err:
        print(f"gatetui: {err}", file=sys.stderr)
        return int(err.exit_code)
    print(message, file=sys.stdout if code == ExitCode.PASS else sys.stderr)
    return int(code)


def verify_record(record: Path, state_dir: Path | None) -> tuple[ExitCode, str]:
    """The exit code and the one line that says why."""
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
    except OSError as err:
        return ExitCode.BAD_INPUT, f"gatetui: cannot read {record}: {err.strerror}"
    except (ValueError, UnicodeDecodeError):
        return ExitCode.BAD_INPUT, f"gatetui: {record} is not JSON: not a verdict record"
    if not isinstance(data, dict) or not any(k in data for k in (*RECORD_KEYS, "seal")):
        return ExitCode.BAD_INPUT, f"gatetui: {record} is not a verdict record (no run_id, verdict or seal)"
    folder, source = key_folder(record, state_dir)
    if folder is None and state_dir is not None:
        return ExitCode.BAD_INPUT, (
            f"gatetui: no verdict key in {state_dir}: pass --state-dir with the "
            "supervisor's state directory that wrote the record"
        )
    if folder is None:
        return ExitCode.BAD_INPUT, (
            f"gatetui: no verdict key found for {record}: it is not inside a state "
            f"directory and {default_state_dir()} holds no key; pass --state-dir with the "
            "supervisor's state directory that wrote it"
        )
    store = Store.open(folder)
    if not isinstance(data.get("seal"), str):
        return ExitCode.FAIL, f"altered: {record} has no seal (removed, or never sealed)"
    result = store.verify(record)
    if result.ok:
        return ExitCode.PASS, f"intact: {record}: {result.reason}"
    if source == "default":  # a key that may never have seen this record: no alarm on a guess
        return ExitCode.BAD_INPUT, (
            f"gatetui: cannot tell: {record} does not match the key in {folder}, which "
            "may not be the state directory that wrote it; pass --state-dir with that one"
        )
    return ExitCode.FAIL, f"altered: {record}: {result.reason}"


def key_folder(record: Path, given: Path | None) -> tuple[Path | None, str]:
    """The state directory whose key sealed `record`, and how it was found:
    "given" (--state-dir), "beside" (the record lies in it, at
    repos/KEY/runs/ID.json), or "default" (a guess); None when none holds a key."""
    if given is not None:
        return (given, "given") if (given / "key").is_file() else (None, "given")
    parts = record.resolve().parents
    if len(parts) > 3 and parts[0].name == "runs" and parts[2].name == "repos" and (parts[3] / "key").is_file():
        return parts[3], "beside"
    default = default_state_dir()
    return (default, "default") if (default / "key").is_file() else (None, "default")
