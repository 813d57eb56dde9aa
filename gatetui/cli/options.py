"""Option groups more than one command takes, each added by one function:
where the gate runs, what a supervisor watches and keeps (`serve` and the
TUI), and the socket a client reaches a supervisor at (`submit`, `mcp`,
`view`, `web`). A command's own options stay in its parser."""

from __future__ import annotations

import argparse
from pathlib import Path

from gatetui.backends.choose import BACKEND_NAMES
from gatetui.backends.runtime_admission import CAP_VARIABLE

# Where a supervisor listens unless told: one socket per repository.
DEFAULT_SOCKET = "/tmp/gatetui-KEY/submit.sock, KEY from the repo's path"


def add_backend_options(parser: argparse.ArgumentParser) -> None:
    """Where the gate runs, and how many sandboxes it may hold at once."""
    parser.add_argument(
        "--backend",
        choices=BACKEND_NAMES,
        default="local",
        help="where the gate runs: here (local) or in Runtime's sandboxes (runtime)",
    )
    # 1 or more: a cap of 0 from the environment means "not a whole number" there
    parser.add_argument(
        "--max-sandboxes",
        type=at_least_one,
        metavar="N",
        help="runtime backend: Runtime sandboxes "
        f"alive at once over every run (default ${CAP_VARIABLE}, else no cap; the free tier runs 4; "
        "a run needs at least 4)",
    )


def add_supervisor_options(parser: argparse.ArgumentParser) -> None:
    """What a supervisor watches, where it gates, keeps its state and
    listens for submits, and how many it takes: `serve` and the TUI alike."""
    parser.add_argument("--base", default="main", help="the ref the agent started from (default main)")
    parser.add_argument("--branch", default="agent/*", metavar="PATTERN", help="branches to watch (default agent/*)")
    add_backend_options(parser)
    parser.add_argument(
        "--state-dir", type=Path, metavar="DIR", help="history, logs and keys (default: $XDG_STATE_HOME/gatetui)"
    )
    parser.add_argument(
        "--socket",
        type=Path,
        metavar="PATH",
        help=f"where `gatetui submit` reaches the supervisor (default: {DEFAULT_SOCKET})",
    )
    parser.add_argument(
        "--cap",
        type=count,
        metavar="N",
        help="submits per branch before a person takes over (default: submit_cap in base's configuration, else 3)",
    )


def add_socket_option(parser: argparse.ArgumentParser, default: str = DEFAULT_SOCKET) -> None:
    """The socket of the supervisor a client talks to; `default` says how
    the client finds it when not told."""
    parser.add_argument("--socket", type=Path, metavar="PATH", help=f"the supervisor's socket (default: {default})")


def count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def at_least_one(text: str) -> int:
    value = count(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value
