"""Entry points: `gatetui check`, `samples`, `demo`, `submit`, `serve`, `mcp`.

`main(argv) -> int` never raises for bad input: every error becomes one line
on stderr and an exit code from `ExitCode` (see DESIGN.md's CLI contract).
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import functools
import importlib.metadata
import re
import sys
from pathlib import Path
from typing import Any

from gatetui.backends.base import Backend
from gatetui.backends.choose import BACKEND_NAMES, choose_backend
from gatetui.backends.runtime_admission import CAP_VARIABLE
from gatetui.errors import BadInput, ExitCode, GateError
from gatetui.gate.api import VERDICT_EXIT, gate_once, gate_request
from gatetui.gate.junit_out import gate_junit
from gatetui.gate.render import verdict_block, verdict_json
from gatetui.inert import inert


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
    parser = _Parser(prog="gatetui", usage="gatetui [REPO] [--base REF] [--branch PATTERN] ...  (the TUI)\n"
                     "       gatetui COMMAND ...", description="Judge agent-written code on a machine the "
                     "agent never touched. With no command, `gatetui [REPO]` opens the TUI: it watches the "
                     "repository's agent branches and gates every new commit, live (its options: "
                     "`gatetui REPO --help`).")
    parser.add_argument("--version", action="version", version=f"gatetui {_version()}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    check = sub.add_parser("check", help="gate one change headless (for CI and scripts)")
    check.add_argument("repo", type=Path, nargs="?", default=Path("."), help="the repository (default: here)")
    check.add_argument("--base", required=True, help="the ref the agent started from")
    check.add_argument("--head", required=True, help="the agent's commit or branch")
    _add_backend_args(check)
    check.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    check.add_argument("--junit", type=Path, metavar="FILE", help="write the checks as JUnit XML")
    check.add_argument("--timeout", type=_seconds, metavar="S", help="time limit per command, seconds")
    check.add_argument("-v", "--verbose", action="store_true", help="stream every command's output on stderr, and print each check's whole detail")
    check.add_argument("--state-dir", type=Path, metavar="DIR", help="where the hidden tests and the baseline "
                       "cache are kept (default: $XDG_STATE_HOME/gatetui); read only, unless a baseline is cached")
    from gatetui.lab.rules import add_lab_parser
    from gatetui.supervise.layer_cache import add_cache_parser
    from gatetui.supervise.verify import add_verify_parser

    add_lab_parser(sub)
    add_verify_parser(sub)
    add_cache_parser(sub)
    samples = sub.add_parser("samples", help="write every sample as a real git repo (and its hidden tests into "
                                             "the state directory, where `check` reads them)")
    samples.add_argument("dir", type=Path, help="a new or empty folder for the repos")
    samples.add_argument("--state-dir", type=Path, metavar="DIR", help="where the hidden tests go (default: "
                         "$XDG_STATE_HOME/gatetui); pass the same to `check`")
    demo = sub.add_parser("demo", help="the samples replayed live into the TUI (plain text without a terminal)")
    demo.add_argument("dir", type=Path, nargs="?", default=Path("demo"), help="where the workshop repository is "
                      "written (default: demo)")
    demo.add_argument("--interval", type=_seconds, default=4.0, metavar="S",
                      help="the least seconds between two replayed agent commits (each also waits for a "
                           "free gate slot)")
    demo.add_argument("--plain", action="store_true", help="print the verdicts as text, even in a terminal")
    _add_submit_parsers(sub)
    return parser


def _add_submit_parsers(sub: argparse._SubParsersAction[_Parser]) -> None:
    submit = sub.add_parser("submit", help="from the agent's working copy: commit, have the supervisor gate it")
    submit.add_argument("--repo", type=Path, help="the working copy (default: the current folder)")
    submit.add_argument("--message", "-m", default="", help="the commit message")
    submit.add_argument("--standalone", action="store_true", help="gate here, without a supervisor "
                        "(the cap and log hiding are then not enforced)")
    submit.add_argument("--socket", type=Path, metavar="PATH", help="the supervisor's socket "
                        "(default: found from the supervised repo's path, or $GATETUI_SOCKET)")
    submit.add_argument("--base", help="--standalone only: the base ref (default origin/main, else main)")
    serve = sub.add_parser("serve", help="the supervisor without a UI: watches, gates, answers submits")
    serve.add_argument("repo", type=Path, help="the repository whose agent branches are supervised")
    serve.add_argument("--base", default="main", help="the ref the agent started from (default main)")
    serve.add_argument("--branch", default="agent/*", metavar="PATTERN", help="branches to watch (default agent/*)")
    _add_backend_args(serve)
    serve.add_argument("--state-dir", type=Path, metavar="DIR", help="history, logs and keys (default: "
                       "$XDG_STATE_HOME/gatetui)")
    serve.add_argument("--socket", type=Path, metavar="PATH", help="where to listen (default "
                       "/tmp/gatetui-KEY/submit.sock, KEY from the repo's path)")
    serve.add_argument("--cap", type=_count, metavar="N", help="submits per branch before a person takes "
                       "over (default: submit_cap in base's configuration, else 3)")
    serve.add_argument("--group", help="make the socket 0660 for this group (default: 0666 in a 0711 folder)")
    mcp = sub.add_parser("mcp", help="the submit and status tools over the Model Context Protocol (stdio)")
    mcp.add_argument("--repo", type=Path, help="the agent's working copy (default: the current folder)")
    mcp.add_argument("--socket", type=Path, metavar="PATH", help="the supervisor's socket (default: found)")


def build_tui_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gatetui", description="Watch the agent's branches and gate every new commit, live "
                     "(subcommands: check, submit, serve, mcp, samples, demo; see `gatetui COMMAND --help`).")
    parser.add_argument("repo", type=Path, nargs="?", default=Path("."), help="the repository to watch "
                        "(default: here)")
    parser.add_argument("--version", action="version", version=f"gatetui {_version()}")
    parser.add_argument("--base", default="main", help="the ref the agent started from (default main)")
    parser.add_argument("--branch", default="agent/*", metavar="PATTERN", help="branches to watch (default agent/*)")
    _add_backend_args(parser)
    parser.add_argument("--state-dir", type=Path, metavar="DIR", help="history, logs and keys (default: "
                        "$XDG_STATE_HOME/gatetui)")
    parser.add_argument("--socket", type=Path, metavar="PATH", help="where `gatetui submit` reaches the app "
                        "(default /tmp/gatetui-KEY/submit.sock, KEY from the repo's path)")
    parser.add_argument("--cap", type=_count, metavar="N", help="submits per branch before a person takes "
                        "over (default: submit_cap in base's configuration, else 3)")
    parser.add_argument("--rules", type=Path, metavar="FILE", help="the rules lab's rules (key l)")
    parser.add_argument("--scenarios", type=Path, metavar="DIR", help="the rules lab's scenarios "
                        "(default: the sample repos)")
    return parser


def _add_backend_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", choices=BACKEND_NAMES, default="local",
                        help="where the gate runs: here (local) or in Runtime's sandboxes (runtime)")
    # 1 or more: a cap of 0 from the environment means "not a whole number" there
    parser.add_argument("--max-sandboxes", type=_at_least_one, metavar="N", help="runtime backend: Runtime sandboxes "
                        f"alive at once over every run (default ${CAP_VARIABLE}, else no cap; the free tier runs 4; "
                        "a run needs at least 4)")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _at_least_one(text: str) -> int:
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def cmd_check(args: argparse.Namespace) -> int:
    from gatetui.supervise.layer_cache import layers_for_check
    from gatetui.supervise.state_inputs import headless_inputs

    inputs = headless_inputs(args.state_dir, args.repo, sys.stderr)
    request = gate_request(args.repo, args.base, args.head, inputs, timeout=args.timeout)
    backend = choose_backend(args.backend, max_sandboxes=args.max_sandboxes,
                             layers=layers_for_check())
    started, finished = asyncio.run(gate_once(request, backend, sys.stderr, args.verbose))
    print(verdict_json(started, finished) if args.json else verdict_block(finished, args.verbose))
    if args.junit:
        try:
            args.junit.write_text(gate_junit(finished))
        except OSError as err:
            raise BadInput(f"cannot write the JUnit file {args.junit}: {err.strerror}") from None
    return VERDICT_EXIT[finished.verdict]


def cmd_samples(args: argparse.Namespace) -> int:
    from gatetui.lab.samples import SampleError, write_all
    from gatetui.supervise.store import Store

    try:
        written = write_all(args.dir)
    except SampleError as err:
        raise BadInput(str(err)) from None
    for scenario, path in written:
        print(f"{path}  main = base, agent/{scenario.name} = head  ({scenario.title})")
    hidden = [(scenario, path) for scenario, path in written if scenario.hidden_tests()]
    if hidden:
        store = Store.open(args.state_dir)
        for scenario, path in hidden:
            for rel, data in scenario.hidden_tests().items():
                store.write_atomic(store.hidden_dir(path).relative_to(store.root) / rel, data)
            print(f"hidden tests of {scenario.name}: {store.hidden_dir(path)}")
    return ExitCode.PASS


def cmd_demo(args: argparse.Namespace) -> int:
    from gatetui.lab.demo import run_demo

    if args.plain or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return run_demo(args.dir, sys.stdout, sys.stderr)
    from gatetui.tui.launch import run_demo_tui

    return run_demo_tui(args.dir, args.interval, _tui_backends)


def cmd_tui(args: argparse.Namespace) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise BadInput("the TUI needs a terminal: for scripts and CI run `gatetui check REPO --base REF --head REF`")
    from gatetui.tui.launch import run_tui

    from gatetui.supervise.layer_cache import layers_for_state

    backends = functools.partial(_tui_backends, max_sandboxes=args.max_sandboxes,
                                 layers=layers_for_state(args.state_dir))
    return run_tui(args.repo, args.base, args.branch, args.backend, args.state_dir, backends,
                   args.socket, args.cap, lab_scenarios=args.scenarios, lab_rules=args.rules)


def _tui_backends(name: str, max_sandboxes: int | None = None, layers: Path | None = None) -> Backend:
    """Backends for the TUI: nothing may print over the screen; the app
    turns the backend's own news into notifications."""
    return choose_backend(name, on_progress=lambda line: None, max_sandboxes=max_sandboxes, layers=layers)


def _wants_tui(argv: list[str]) -> bool:
    """No command: the TUI, on REPO. A first word that is no command and no
    folder is a mistyped command, not a repository."""
    if not argv:
        return True
    first = argv[0]
    if first in COMMANDS or first in ("-h", "--help", "--version"):
        return False
    if not first.startswith("-") and "/" not in first and first != "." and not Path(first).exists():
        near = difflib.get_close_matches(first, COMMANDS, n=1)
        hint = f"did you mean `gatetui {near[0]}`? " if near else ""
        raise BadInput(f"unknown command {first!r} ({hint}commands: {', '.join(COMMANDS)}); to watch a "
                       "repository, pass its folder: `gatetui PATH`")
    return True


def _version() -> str:
    try:
        return importlib.metadata.version("gatetui")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def cmd_lab(args: argparse.Namespace) -> int:
    from gatetui.lab.rules import cmd_lab as run

    return run(args)


def cmd_verify(args: argparse.Namespace) -> int:
    from gatetui.supervise.verify import cmd_verify as run

    return run(args)


def cmd_submit(args: argparse.Namespace) -> int:
    from gatetui.agent.submit import cmd_submit as run

    return run(args)


def cmd_serve(args: argparse.Namespace) -> int:
    from gatetui.supervise.serve import SubmitServer, run_serve
    from gatetui.supervise.store import Store
    from gatetui.supervise.supervisor import Supervisor

    store = Store.open(args.state_dir)
    if store.note:
        print(f"gatetui serve: {store.note}", file=sys.stderr, flush=True)
    backend = choose_backend(args.backend, max_sandboxes=args.max_sandboxes, layers=store.root / "layers")
    supervisor = Supervisor(args.repo, backend, store, base=args.base, pattern=args.branch,
                            submit_cap=args.cap)
    return run_serve(supervisor, SubmitServer(supervisor, args.socket, group=args.group))


def cmd_cache(args: argparse.Namespace) -> int:
    from gatetui.supervise.layer_cache import cmd_cache as run

    return run(args)


def cmd_mcp(args: argparse.Namespace) -> int:
    from gatetui.agent.mcp import run_mcp

    return run_mcp(args.repo or Path.cwd(), args.socket)


COMMANDS = {"check": cmd_check, "samples": cmd_samples, "demo": cmd_demo, "lab": cmd_lab,
            "verify": cmd_verify, "submit": cmd_submit, "serve": cmd_serve, "mcp": cmd_mcp, "cache": cmd_cache}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        if _wants_tui(argv):
            return int(cmd_tui(build_tui_parser().parse_args(argv)))
        args = build_parser().parse_args(argv)
        return int(COMMANDS[args.command](args))
    except GateError as err:  # it may quote head's names and lines: shown inert
        print(f"gatetui: {inert(str(err))}", file=sys.stderr)
        return int(err.exit_code)
    except PermissionError as err:  # e.g. a HOME whose git config this user cannot read
        print(f"gatetui: permission denied: {inert(str(err.filename or err))}: run as a user who can read it, "
              "or fix its permissions", file=sys.stderr)
        return int(ExitCode.BAD_INPUT)
    except KeyboardInterrupt:
        print("gatetui: interrupted; the run's workspace was removed", file=sys.stderr)
        return 130


def entry() -> None:
    sys.exit(main())
