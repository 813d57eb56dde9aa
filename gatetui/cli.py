"""Entry points: `gatetui check`, `samples`, `demo`.

`main(argv) -> int` never raises for bad input: every error becomes one line
on stderr and an exit code from `ExitCode` (see DESIGN.md's CLI contract).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TextIO

from gatetui.backends.base import Backend
from gatetui.errors import BackendError, BadInput, ExitCode, GateError
from gatetui.gate.checks import Verdict
from gatetui.gate.events import RunFinished, RunStarted
from gatetui.gate.junit_out import gate_junit
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from gatetui.render import Progress, verdict_block, verdict_json

VERDICT_EXIT = {
    Verdict.PASS: ExitCode.PASS,
    Verdict.FAIL: ExitCode.FAIL,
    Verdict.REVIEW: ExitCode.FAIL,
    Verdict.ERROR: ExitCode.GATE_ERROR,
}


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as bad input (exit 2), one line."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise BadInput(f"{message} (see `gatetui {self.prog.split()[-1]} --help`)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gatetui", description="Judge agent-written code on a machine the agent never touched.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    check = sub.add_parser("check", help="gate one change headless (for CI and scripts)")
    check.add_argument("repo", type=Path)
    check.add_argument("--base", required=True, help="the ref the agent started from")
    check.add_argument("--head", required=True, help="the agent's commit or branch")
    check.add_argument("--backend", choices=("local", "runtime"), default="local")
    check.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    check.add_argument("--junit", type=Path, metavar="FILE", help="write the checks as JUnit XML")
    check.add_argument("--timeout", type=_seconds, metavar="S", help="time limit per command, seconds")
    check.add_argument("-v", "--verbose", action="store_true", help="stream every command's output on stderr")
    samples = sub.add_parser("samples", help="write every sample as a real git repo")
    samples.add_argument("dir", type=Path)
    demo = sub.add_parser("demo", help="gate every sample and print what the gate caught")
    demo.add_argument("dir", type=Path, nargs="?", default=Path("demo"))
    return parser


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return value


def make_backend(name: str) -> Backend:
    if name == "local":
        from gatetui.backends.local import LocalBackend

        return LocalBackend()
    raise BackendError("the runtime backend is not part of this version yet: use --backend local (it needs nothing)")


async def gate_once(request: GateRequest, backend: Backend, progress: TextIO,
                    verbose: bool = False) -> tuple[RunStarted, RunFinished]:
    plan = await asyncio.to_thread(make_plan, request)
    started: RunStarted | None = None
    show = Progress(progress, verbose)
    async for event in run_gate(plan, backend):
        show(event)
        if isinstance(event, RunStarted):
            started = event
        if isinstance(event, RunFinished):
            assert started is not None
            return started, event
    raise BackendError("the gate ended without a verdict")


def cmd_check(args: argparse.Namespace) -> int:
    request = GateRequest(args.repo, args.base, args.head, args.timeout)
    backend = make_backend(args.backend)
    started, finished = asyncio.run(gate_once(request, backend, sys.stderr, args.verbose))
    print(verdict_json(started, finished) if args.json else verdict_block(finished))
    if args.junit:
        try:
            args.junit.write_text(gate_junit(finished))
        except OSError as err:
            raise BadInput(f"cannot write the JUnit file {args.junit}: {err.strerror}") from None
    return VERDICT_EXIT[finished.verdict]


def cmd_samples(args: argparse.Namespace) -> int:
    from gatetui.samples import SampleError, write_all

    try:
        written = write_all(args.dir)
    except SampleError as err:
        raise BadInput(str(err)) from None
    for scenario, path in written:
        print(f"{path}  main = base, agent/{scenario.name} = head  ({scenario.title})")
    return ExitCode.PASS


def cmd_demo(args: argparse.Namespace) -> int:
    from gatetui.demo import run_demo

    return run_demo(args.dir, sys.stdout, sys.stderr)


COMMANDS = {"check": cmd_check, "samples": cmd_samples, "demo": cmd_demo}


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            raise BadInput("the TUI is not built yet: run `gatetui check REPO --base REF --head REF` or `gatetui demo`")
        return int(COMMANDS[args.command](args))
    except GateError as err:
        print(f"gatetui: {err}", file=sys.stderr)
        return int(err.exit_code)
    except KeyboardInterrupt:
        print("gatetui: interrupted; the run's workspace was removed", file=sys.stderr)
        return 130


def entry() -> None:
    sys.exit(main())
