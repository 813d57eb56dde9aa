"""`gatetui lab`: sealing rules tried against scenarios, as a matrix.

A team deciding which files an agent may not silently change wants to see,
before adopting a rule, which cheats it catches and which honest changes it
would stop. The lab gates every scenario (the sample repos, or a folder of
the user's own in the same format) for real, under the rules of a TOML file
that replace each scenario's own, and compares every check with what the
scenario expects. Exit 0 only when nothing differs, 1 otherwise, 2 on bad
input (a malformed rules file or scenario), found before any gate starts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from gatetui.config import SealSettings, load_seal_file
from gatetui.errors import BadInput, ExitCode, GateError
from gatetui.gate.api import GateInputs, gate_request
from gatetui.gate.events import RunFinished
from gatetui.gate.plan import Plan, make_plan
from gatetui.gate.sealing.digests import RuleDigest
from gatetui.inert import inert, inert_line
from gatetui.lab.samples import CHECK_IDS, SAMPLES_DIR, SampleError, Scenario, load_scenarios, materialize

SIDE_BY_SIDE = 2  # the machine is shared: two gates at a time at most
COLUMNS = (*CHECK_IDS, "verdict")
CHEATS = ("fail", "review")


@dataclass(frozen=True)
class LabRow:
    scenario: str
    check: str  # a check id, or "verdict"
    expected: str
    actual: str

    @property
    def differs(self) -> bool:
        return self.expected != self.actual


@dataclass(frozen=True)
class Outcome:
    """One scenario gated: every check's status, the verdict, each rule's digest."""

    scenario: Scenario
    actual: dict[str, str]  # column -> status; "error" for all when the gate could not run
    rules: tuple[RuleDigest, ...] = ()
    error: str = ""

    def rows(self) -> list[LabRow]:
        expected = {**self.scenario.checks, "verdict": self.scenario.verdict}
        return [LabRow(self.scenario.name, c, expected[c], self.actual.get(c, "error")) for c in COLUMNS]


def add_lab_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "lab", help="try sealing rules against scenarios, as a matrix"
    )
    parser.add_argument(
        "--rules",
        type=Path,
        metavar="FILE",
        help="a TOML file of [tool.gatetui.seal] rules that replace each scenario's own",
    )
    parser.add_argument(
        "--scenarios",
        type=Path,
        metavar="DIR",
        help="a folder of scenarios (NAME/{base,head,scenario.toml}); default: the samples",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help='print {"rows": [{"scenario", "check", "expected", "actual"}], "mismatches": N}',
    )
    return parser


def cmd_lab(args: argparse.Namespace) -> int:
    try:
        seal = load_seal_file(args.rules) if args.rules else None
        outcomes = run_lab(args.scenarios or SAMPLES_DIR, seal, progress=sys.stderr)
    except GateError as err:
        print(f"gatetui: {inert(str(err))}", file=sys.stderr)
        return int(err.exit_code)
    rows = [row for outcome in outcomes for row in outcome.rows()]
    mismatches = sum(row.differs for row in rows)
    if args.json:
        print(json.dumps({"rows": [row.__dict__ for row in rows], "mismatches": mismatches}, indent=2))
    else:
        print(inert(matrix(outcomes)))  # scenario names and gate errors, from a folder of anyone's
        print()
        print(inert(summary(outcomes)))
    return int(ExitCode.PASS if mismatches == 0 else ExitCode.FAIL)


def run_lab(
    folder: Path, seal: SealSettings | None, progress: TextIO | None = None, work_root: Path | None = None
) -> list[Outcome]:
    """Every scenario of `folder` gated under `seal` (None: each its own rules)."""
    try:
        scenarios = load_scenarios(folder)
    except SampleError as err:
        raise BadInput(str(err)) from None
    if not scenarios:
        raise BadInput(f"no scenarios in {folder}: each needs NAME/base, NAME/head and NAME/scenario.toml")
    with tempfile.TemporaryDirectory(prefix="gatetui-lab-") as tmp:
        plans = [_plan(s, Path(tmp), seal) for s in scenarios]  # bad input surfaces before any gate
        say = (lambda line: print(inert_line(line), file=progress, flush=True)) if progress else (lambda line: None)
        return asyncio.run(_gate_all(plans, say, work_root))


def scenario_inputs(scenario: Scenario, seal: SealSettings | None = None) -> GateInputs:
    """A scenario carries its own hidden tests and random-order seed, so its
    gate judges the same wherever it runs (the lab, the demo, the sample tests)."""
    return GateInputs(hidden=scenario.hidden_tests(), seal=seal, random_seed=scenario.random_seed)


def _plan(scenario: Scenario, root: Path, seal: SealSettings | None) -> tuple[Scenario, Plan]:
    repo = materialize(scenario, root / scenario.name)
    try:
        return scenario, make_plan(gate_request(repo, "main", scenario.branch, scenario_inputs(scenario, seal)))
    except BadInput as err:
        raise BadInput(f"scenario {scenario.name}: {err}") from None


async def _gate_all(
    plans: Sequence[tuple[Scenario, Plan]], say: Callable[[str], None], work_root: Path | None
) -> list[Outcome]:
    limit = asyncio.Semaphore(SIDE_BY_SIDE)

    async def one(scenario: Scenario, plan: Plan) -> Outcome:
        async with limit:
            outcome = await gate_one(scenario, plan, work_root)
        differs = sum(row.differs for row in outcome.rows())
        say(
            f"{scenario.name}: {outcome.actual.get('verdict', 'error')}"
            + (f" ({differs} differ from the scenario)" if differs else "")
        )
        return outcome

    return list(await asyncio.gather(*(one(s, p) for s, p in plans)))


async def gate_one(scenario: Scenario, plan: Plan, work_root: Path | None = None) -> Outcome:
    """The same path as `gatetui check` and the sample tests: run_gate on the
    local backend; a gate that cannot run is an `error` in every column."""
    from gatetui.backends.choose import choose_backend
    from gatetui.gate.runner import run_gate

    rules = plan.digests.rules
    try:
        async for event in run_gate(plan, choose_backend("local", work_root=work_root)):
            if isinstance(event, RunFinished):
                actual = {r.id.value: r.status.value for r in event.results}
                return Outcome(scenario, {**actual, "verdict": event.verdict.value}, rules)
    except GateError as err:
        return Outcome(scenario, dict.fromkeys(COLUMNS, "error"), rules, str(err))
    return Outcome(scenario, dict.fromkeys(COLUMNS, "error"), rules, "the gate ended without a verdict")


def matrix(outcomes: Sequence[Outcome]) -> str:
    """Scenario x check; a cell that differs reads `got (want expected)`."""
    table = [["scenario", *COLUMNS]]
    for outcome in outcomes:
        cells = [row.actual if not row.differs else f"{row.actual} (want {row.expected})" for row in outcome.rows()]
        table.append([outcome.scenario.name, *cells])
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in table]
    errors = [f"{o.scenario.name}: the gate could not run: {o.error}" for o in outcomes if o.error]
    return "\n".join([*lines, *errors])


def summary(outcomes: Sequence[Outcome]) -> str:
    """What each rule sees, which cheats it is blind to, and what slipped through."""
    names = list(dict.fromkeys(rule.name for o in outcomes for rule in o.rules))
    lines = []
    for name in names:
        seen = [(o, r) for o in outcomes for r in o.rules if r.name == name]
        policy = ", ".join(
            sorted({f"on_change = {r.on_change}" + (", allow_new" if r.allow_new else "") for _, r in seen})
        )
        cheats = [o.scenario.name for o, r in seen if r.changed and o.scenario.verdict in CHEATS]
        honest = [o.scenario.name for o, r in seen if r.changed and o.scenario.verdict not in CHEATS]
        blind = [o.scenario.name for o, r in seen if not r.changed and o.scenario.verdict in CHEATS]
        lines += [
            f"rule {name!r} ({policy})",
            f"  sees a change in cheats: {_names(cheats)}",
            f"  sees a change in honest ones: {_names(honest)}",
            f"  sees nothing of: {_names(blind)}",
        ]
    slipped = [
        f"{o.scenario.name} (want {o.scenario.verdict})"
        for o in outcomes
        if o.scenario.verdict in CHEATS and o.actual.get("verdict") == "pass"
    ]
    stopped = [
        f"{o.scenario.name} (got {o.actual.get('verdict')})"
        for o in outcomes
        if o.scenario.verdict == "pass" and o.actual.get("verdict") != "pass"
    ]
    rows = [row for o in outcomes for row in o.rows()]
    lines += [
        f"slipped through (a cheat that passed): {_names(slipped)}",
        f"stopped although honest: {_names(stopped)}",
        f"{len(outcomes)} scenarios, {sum(r.differs for r in rows)} of {len(rows)} cells differ "
        "from what the scenarios expect",
    ]
    return "\n".join(lines)


def _names(items: Sequence[str]) -> str:
    return ", ".join(items) if items else "none"


# --- the lab as it happens (the TUI's lab screen; no Textual here) ---------------


@dataclass(frozen=True)
class LabPlanned:
    """Every scenario is materialized and planned: the matrix's rows, in order."""

    scenarios: tuple[Scenario, ...]


@dataclass(frozen=True)
class ScenarioStarted:
    """A scenario's gate has a slot and is running."""

    name: str


LabEvent = LabPlanned | ScenarioStarted | Outcome


def prepare_lab(folder: Path, seal: SealSettings | None, root: Path) -> list[tuple[Scenario, Plan]]:
    """Every scenario of `folder` written as a repo under `root` and planned
    under `seal`; bad input (BadInput) is raised here, before any gate."""
    try:
        scenarios = load_scenarios(folder)
    except SampleError as err:
        raise BadInput(str(err)) from None
    if not scenarios:
        raise BadInput(f"no scenarios in {folder}: each needs NAME/base, NAME/head and NAME/scenario.toml")
    return [_plan(s, root, seal) for s in scenarios]


async def stream_lab(
    folder: Path, seal: SealSettings | None, work_root: Path | None = None, side_by_side: int = SIDE_BY_SIDE
) -> AsyncIterator[LabEvent]:
    """The lab of `run_lab`, as it happens: `LabPlanned` first (bad input is
    raised before it), then per scenario `ScenarioStarted` when its gate gets
    a slot and its `Outcome` when the gate ends, in the order gates end.
    Closing the iterator early (or cancelling its consumer) cancels the
    gates in progress; their workspaces are removed."""
    with tempfile.TemporaryDirectory(prefix="gatetui-lab-") as tmp:
        plans = await asyncio.to_thread(prepare_lab, folder, seal, Path(tmp))
        yield LabPlanned(tuple(scenario for scenario, _ in plans))
        async for event in gate_as_finished(plans, work_root, side_by_side):
            yield event


async def gate_as_finished(
    plans: Sequence[tuple[Scenario, Plan]], work_root: Path | None = None, side_by_side: int = SIDE_BY_SIDE
) -> AsyncIterator[ScenarioStarted | Outcome]:
    """Gate every plan, `side_by_side` at a time, yielding as gates start and end."""
    queue: asyncio.Queue[ScenarioStarted | Outcome | BaseException] = asyncio.Queue()
    limit = asyncio.Semaphore(side_by_side)

    async def one(scenario: Scenario, plan: Plan) -> None:
        try:
            async with limit:
                queue.put_nowait(ScenarioStarted(scenario.name))
                queue.put_nowait(await gate_one(scenario, plan, work_root))
        except Exception as err:  # noqa: BLE001 - a bug, not the scenario's: the consumer sees it
            queue.put_nowait(err)

    tasks = [asyncio.create_task(one(s, p)) for s, p in plans]
    try:
        for _ in range(2 * len(tasks)):
            item = await queue.get()
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
