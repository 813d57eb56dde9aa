"""Entry points: `gatetui check`, `samples`, `demo`, `submit`, `serve`, `mcp`, `view`, `web`.

`main(argv) -> int` never raises for bad input: every error becomes one line
on stderr and an exit code from `ExitCode` (see DESIGN.md's CLI contract).
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import functools
import sys
from pathlib import Path

from gatetui.backends.base import Backend
from gatetui.backends.choose import choose_backend
from gatetui.cli.parsers import build_parser, build_tui_parser
from gatetui.errors import BadInput, ExitCode, GateError
from gatetui.gate.api import VERDICT_EXIT, gate_once, gate_request
from gatetui.gate.render import verdict_block, verdict_json
from gatetui.gate.reports.gate_junit import gate_junit
from gatetui.inert import inert


def cmd_check(args: argparse.Namespace) -> int:
    from gatetui.supervise.gate_inputs import headless_inputs
    from gatetui.supervise.layer_cache import layers_for_check

    inputs = headless_inputs(args.state_dir, args.repo, sys.stderr)
    request = gate_request(args.repo, args.base, args.head, inputs, timeout=args.timeout)
    backend = choose_backend(args.backend, max_sandboxes=args.max_sandboxes, layers=layers_for_check())
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
    from gatetui.supervise.layer_cache import layers_for_state
    from gatetui.tui.launch import run_tui

    backends = functools.partial(
        _tui_backends, max_sandboxes=args.max_sandboxes, layers=layers_for_state(args.state_dir)
    )
    return run_tui(
        args.repo,
        args.base,
        args.branch,
        args.backend,
        args.state_dir,
        backends,
        args.socket,
        args.cap,
        lab_scenarios=args.scenarios,
        lab_rules=args.rules,
    )


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
        raise BadInput(
            f"unknown command {first!r} ({hint}commands: {', '.join(COMMANDS)}); to watch a "
            "repository, pass its folder: `gatetui PATH`"
        )
    return True


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
    supervisor = Supervisor(args.repo, backend, store, base=args.base, pattern=args.branch, submit_cap=args.cap)
    return run_serve(supervisor, SubmitServer(supervisor, args.socket, group=args.group))


def cmd_cache(args: argparse.Namespace) -> int:
    from gatetui.supervise.layer_cache import cmd_cache as run

    return run(args)


def cmd_mcp(args: argparse.Namespace) -> int:
    from gatetui.agent.mcp import run_mcp

    return run_mcp(args.repo or Path.cwd(), args.socket)


def cmd_view(args: argparse.Namespace) -> int:
    from gatetui.cli.viewers import cmd_view as run

    return run(args)


def cmd_web(args: argparse.Namespace) -> int:
    from gatetui.cli.viewers import cmd_web as run

    return run(args)


COMMANDS = {
    "check": cmd_check,
    "samples": cmd_samples,
    "demo": cmd_demo,
    "lab": cmd_lab,
    "verify": cmd_verify,
    "submit": cmd_submit,
    "serve": cmd_serve,
    "mcp": cmd_mcp,
    "cache": cmd_cache,
    "view": cmd_view,
    "web": cmd_web,
}


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
        print(
            f"gatetui: permission denied: {inert(str(err.filename or err))}: run as a user who can read it, "
            "or fix its permissions",
            file=sys.stderr,
        )
        return int(ExitCode.BAD_INPUT)
    except KeyboardInterrupt:
        print("gatetui: interrupted; the run's workspace was removed", file=sys.stderr)
        return 130


def entry() -> None:
    sys.exit(main())
