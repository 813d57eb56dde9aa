"""`gatetui view` and `gatetui web`: read-only viewers of a running supervisor."""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path
from typing import Any

from gatetui.cli.options import add_socket_option
from gatetui.errors import BackendError, BadInput


def add_viewer_parsers(sub: argparse._SubParsersAction[Any]) -> None:
    view = sub.add_parser(
        "view", help="a read-only screen on a running supervisor (`gatetui serve` or the TUI): gates nothing"
    )
    _add_target(view)
    web = sub.add_parser("web", help="the read-only screen as a web page for a room, behind a token")
    _add_target(web)
    web.add_argument("--host", default="127.0.0.1", help="the address to serve on (default 127.0.0.1)")
    web.add_argument("--port", type=_port, default=8000, help="the port (default 8000)")
    web.add_argument(
        "--token",
        metavar="T",
        help="what the room's URL must carry (default on loopback: a fresh one; any other --host needs one)",
    )


def _add_target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "repo", type=Path, nargs="?", default=Path("."), help="the supervised repository (default: here)"
    )
    add_socket_option(parser)


def cmd_view(args: argparse.Namespace) -> int:
    from gatetui.supervise.remote import RemoteSupervisor
    from gatetui.tui.viewer import run_view

    if not (sys.stdout.isatty() or os.environ.get("TEXTUAL_DRIVER")):  # a terminal, or a web page's driver
        raise BadInput("the viewer needs a terminal: `gatetui web` serves it as a web page")
    return run_view(RemoteSupervisor(_socket(args)))


def cmd_web(args: argparse.Namespace) -> int:
    from gatetui.tui.web import room_token, run_web

    token = room_token(args.host, args.token)  # a missing token is said before anything starts
    path = _socket(args)
    _answers(path)
    return run_web(args.repo, path, args.host, args.port, token)


def _socket(args: argparse.Namespace) -> Path:
    from gatetui.supervise.serve import default_socket

    return Path(args.socket) if args.socket else default_socket(args.repo)


def _answers(path: Path) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(2.0)
        try:
            probe.connect(str(path))
        except OSError as err:
            raise BackendError(
                f"no supervisor answers on {path} ({err.strerror or err}): start `gatetui serve REPO` "
                "or the TUI on the repository, or pass its --socket"
            ) from None


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 < value < 65536:
        raise argparse.ArgumentTypeError("must be 1 to 65535")
    return value
