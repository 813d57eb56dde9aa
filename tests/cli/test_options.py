"""The option groups several commands share (gatetui/cli/options.py):
`serve` and the TUI take the same supervisor options, and every client of a
supervisor the same socket option, so that one command's grammar cannot
drift from another's."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatetui.cli.parsers import build_parser, build_tui_parser
from gatetui.errors import BadInput

SUPERVISOR_ARGS = [
    "--base",
    "trunk",
    "--branch",
    "bot/*",
    "--backend",
    "runtime",
    "--max-sandboxes",
    "8",
    "--state-dir",
    "/state",
    "--socket",
    "/run/s.sock",
    "--cap",
    "0",
]
SUPERVISOR_VALUES = {
    "base": "trunk",
    "branch": "bot/*",
    "backend": "runtime",
    "max_sandboxes": 8,
    "state_dir": Path("/state"),
    "socket": Path("/run/s.sock"),
    "cap": 0,
}
DEFAULTS = {
    "base": "main",
    "branch": "agent/*",
    "backend": "local",
    "max_sandboxes": None,
    "state_dir": None,
    "socket": None,
    "cap": None,
}


def picked(namespace: object, names: dict[str, object]) -> dict[str, object]:
    return {name: getattr(namespace, name) for name in names}


def test_serve_and_the_tui_read_the_supervisor_options_alike() -> None:
    serve = build_parser().parse_args(["serve", "repo", *SUPERVISOR_ARGS])
    tui = build_tui_parser().parse_args(["repo", *SUPERVISOR_ARGS])
    assert (picked(serve, SUPERVISOR_VALUES), picked(tui, SUPERVISOR_VALUES)) == (SUPERVISOR_VALUES, SUPERVISOR_VALUES)


def test_serve_and_the_tui_share_the_supervisor_defaults() -> None:
    serve = build_parser().parse_args(["serve", "repo"])
    tui = build_tui_parser().parse_args([])
    assert (picked(serve, DEFAULTS), picked(tui, DEFAULTS)) == (DEFAULTS, DEFAULTS)


@pytest.mark.parametrize("command", [["submit"], ["mcp"], ["view"], ["web"]])
def test_every_client_names_the_supervisors_socket_as_a_path(command: list[str]) -> None:
    assert build_parser().parse_args([*command, "--socket", "/run/s.sock"]).socket == Path("/run/s.sock")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--cap", "-1"], "argument --cap: must be 0 or more (see `gatetui serve --help`)"),
        (["--max-sandboxes", "0"], "argument --max-sandboxes: must be 1 or more (see `gatetui serve --help`)"),
    ],
)
def test_a_count_out_of_range_is_bad_input_naming_the_option(args: list[str], words: str) -> None:
    with pytest.raises(BadInput) as raised:
        build_parser().parse_args(["serve", "repo", *args])
    assert str(raised.value) == words
