"""The command line's grammar: one parser per command, and the TUI's own
(no command: `gatetui [REPO]`). A usage error is bad input, one line, exit 2
(see `_Parser`), never argparse's usage dump and exit."""

from __future__ import annotations

import argparse
import importlib.metadata
import re
import sys
from pathlib import Path
from typing import Any

from gatetui.cli.options import add_backend_options, add_socket_option, add_supervisor_options
from gatetui.errors import BadInput


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as bad input (exit 2), one line,
    and names an option it does not know before any it misses: `check
    --bogus` is about --bogus, not about --base and --head."""

    def error(self, message: str) -> None:  # type: ignore[override]
        words = self.prog.split()[1:]
        while words and not all(re.fullmatch(r"[a-z]+", word) for word in words):
            words.pop(0)  # the top parser's usage before the command's words: `check`, `cache prune`
        command = " ".join(words)
        raise BadInput(f"{message} (see `gatetui{' ' + command if command else ''} --help`)")

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        words = list(sys.argv[1:] if args is None else args)
        if self._subparsers is None:  # a command's own parser: every option in `words` is its
            for word in words:
                if word == "--":
                    break
                if word.startswith("-") and not re.match(r"^-\d", word) and not self._knows(word):
                    self.error(f"unknown option {word.split('=', 1)[0]}")
        return super().parse_known_args(words, namespace)

    def _knows(self, word: str) -> bool:
        name = word.split("=", 1)[0]
        if name in self._option_string_actions:
            return True
        if name.startswith("--"):  # argparse takes an unambiguous prefix
            return any(o.startswith(name) for o in self._option_string_actions if o.startswith("--"))
        return len(name) > 2 and name[:2] in self._option_string_actions  # -vv, -m"text"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gatetui",
        usage="gatetui [REPO] [--base REF] [--branch PATTERN] ...  (the TUI)\n       gatetui COMMAND ...",
        description="Judge agent-written code on a machine the "
        "agent never touched. With no command, `gatetui [REPO]` opens the TUI: it watches the "
        "repository's agent branches and gates every new commit, live (its options: "
        "`gatetui REPO --help`).",
    )
    parser.add_argument("--version", action="version", version=f"gatetui {_version()}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    check = sub.add_parser("check", help="gate one change headless (for CI and scripts)")
    check.add_argument("repo", type=Path, nargs="?", default=Path("."), help="the repository (default: here)")
    check.add_argument("--base", required=True, help="the ref the agent started from")
    check.add_argument("--head", required=True, help="the agent's commit or branch")
    add_backend_options(check)
    check.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    check.add_argument("--junit", type=Path, metavar="FILE", help="write the checks as JUnit XML")
    check.add_argument("--timeout", type=_seconds, metavar="S", help="time limit per command, seconds")
    check.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="stream every command's output on stderr, and print each check's whole detail",
    )
    check.add_argument(
        "--state-dir",
        type=Path,
        metavar="DIR",
        help="where the hidden tests and the baseline "
        "cache are kept (default: $XDG_STATE_HOME/gatetui); read only, unless a baseline is cached",
    )
    from gatetui.lab.rules import add_lab_parser
    from gatetui.supervise.layer_cache import add_cache_parser
    from gatetui.supervise.verify import add_verify_parser

    add_lab_parser(sub)
    add_verify_parser(sub)
    add_cache_parser(sub)
    samples = sub.add_parser(
        "samples",
        help="write every sample as a real git repo (and its hidden tests into "
        "the state directory, where `check` reads them)",
    )
    samples.add_argument("dir", type=Path, help="a new or empty folder for the repos")
    samples.add_argument(
        "--state-dir",
        type=Path,
        metavar="DIR",
        help="where the hidden tests go (default: $XDG_STATE_HOME/gatetui); pass the same to `check`",
    )
    demo = sub.add_parser("demo", help="the samples replayed live into the TUI (plain text without a terminal)")
    demo.add_argument(
        "dir",
        type=Path,
        nargs="?",
        default=Path("demo"),
        help="where the workshop repository is written (default: demo)",
    )
    demo.add_argument(
        "--interval",
        type=_seconds,
        default=4.0,
        metavar="S",
        help="the least seconds between two replayed agent commits (each also waits for a free gate slot)",
    )
    demo.add_argument("--plain", action="store_true", help="print the verdicts as text, even in a terminal")
    _add_submit_parsers(sub)
    from gatetui.cli.viewers import add_viewer_parsers

    add_viewer_parsers(sub)
    return parser


def _add_submit_parsers(sub: argparse._SubParsersAction[_Parser]) -> None:
    submit = sub.add_parser("submit", help="from the agent's working copy: commit, have the supervisor gate it")
    submit.add_argument("--repo", type=Path, help="the working copy (default: the current folder)")
    submit.add_argument("--message", "-m", default="", help="the commit message")
    submit.add_argument(
        "--standalone",
        action="store_true",
        help="gate here, without a supervisor (the cap and log hiding are then not enforced)",
    )
    add_socket_option(submit, "found from the supervised repo's path, or $GATETUI_SOCKET")
    submit.add_argument("--base", help="--standalone only: the base ref (default origin/main, else main)")
    serve = sub.add_parser("serve", help="the supervisor without a UI: watches, gates, answers submits")
    serve.add_argument("repo", type=Path, help="the repository whose agent branches are supervised")
    add_supervisor_options(serve)
    serve.add_argument("--group", help="make the socket 0660 for this group (default: 0666 in a 0711 folder)")
    mcp = sub.add_parser("mcp", help="the submit and status tools over the Model Context Protocol (stdio)")
    mcp.add_argument("--repo", type=Path, help="the agent's working copy (default: the current folder)")
    add_socket_option(mcp, "found")


def build_tui_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gatetui",
        description="Watch the agent's branches and gate every new commit, live "
        "(subcommands: check, submit, serve, mcp, samples, demo; see `gatetui COMMAND --help`).",
    )
    parser.add_argument("repo", type=Path, nargs="?", default=Path("."), help="the repository to watch (default: here)")
    parser.add_argument("--version", action="version", version=f"gatetui {_version()}")
    add_supervisor_options(parser)
    parser.add_argument("--rules", type=Path, metavar="FILE", help="the rules lab's rules (key l)")
    parser.add_argument(
        "--scenarios", type=Path, metavar="DIR", help="the rules lab's scenarios (default: the sample repos)"
    )
    return parser


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return value


def _version() -> str:
    try:
        return importlib.metadata.version("gatetui")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"
