"""The rules lab's matrix: scenario x check, expected vs actual, filling in
as each scenario's gate ends; and the lines that sum it up."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text

from gatetui.inert import inert_line
from gatetui.lab.rules import COLUMNS, LabEvent, LabPlanned, Outcome, ScenarioStarted, summary
from gatetui.lab.samples import Scenario
from gatetui.tui.widgets.tables import KeyedTable

EXPECTED_STYLE = "dim"  # not gated yet: what the scenario expects
DIFFERS_STYLE = "bold white on #8b1a1a"
MATCH_STYLE = {"pass": "green", "fail": "yellow", "review": "yellow", "error": "magenta", "skipped": "dim"}
LEGEND = "dim: expected, not gated yet   colour: what the gate said, as expected   red: got (want expected)"


@dataclass
class LabState:
    """What the lab screen knows of one lab run (plain data, no Textual)."""

    scenarios: tuple[Scenario, ...] = ()
    running: set[str] = field(default_factory=set)
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    error: str = ""  # bad input: the rules file or a scenario

    def apply(self, event: LabEvent) -> None:
        match event:
            case LabPlanned():
                self.scenarios = event.scenarios
            case ScenarioStarted():
                self.running.add(event.name)
            case Outcome():
                self.running.discard(event.scenario.name)
                self.outcomes[event.scenario.name] = event

    @property
    def done(self) -> list[Outcome]:
        """The outcomes so far, in the matrix's order."""
        return [self.outcomes[s.name] for s in self.scenarios if s.name in self.outcomes]

    @property
    def finished(self) -> bool:
        return bool(self.scenarios) and len(self.outcomes) == len(self.scenarios)

    @property
    def mismatches(self) -> int:
        return sum(row.differs for outcome in self.done for row in outcome.rows())


def cell(expected: str, actual: str | None) -> Text:
    if actual is None:
        return Text(inert_line(expected), style=EXPECTED_STYLE)
    if actual != expected:
        return Text(inert_line(f"{actual} (want {expected})"), style=DIFFERS_STYLE)
    return Text(inert_line(actual), style=MATCH_STYLE.get(actual, ""))


def row_cells(scenario: Scenario, outcome: Outcome | None, running: bool) -> tuple[Text, ...]:
    expected = {**scenario.checks, "verdict": scenario.verdict}
    if outcome is None:
        cells = [cell(expected[c], None) for c in COLUMNS]
        if running:
            cells[-1] = Text("running", style="bold cyan")
        return (Text(inert_line(scenario.name)), *cells)
    actual = {row.check: row.actual for row in outcome.rows()}
    return (Text(inert_line(scenario.name)), *(cell(expected[c], actual[c]) for c in COLUMNS))


class LabMatrix(KeyedTable):
    COLUMNS = (("scenario", "scenario"), *((c, c) for c in COLUMNS))

    def show(self, state: LabState) -> None:
        self.sync({s.name: row_cells(s, state.outcomes.get(s.name), s.name in state.running) for s in state.scenarios})


def status_line(state: LabState, generation: int) -> str:
    """Where the lab is: gated so far, running, the mismatches so far."""
    if state.error:
        return f"the lab could not start: {state.error}"
    if not state.scenarios:
        return "reading the scenarios and the rules..."
    total, gated = len(state.scenarios), len(state.outcomes)
    run = "" if generation == 1 else f"run {generation}: "
    where = "every scenario gated" if state.finished else f"{gated} of {total} gated, {len(state.running)} running"
    cells = sum(len(outcome.rows()) for outcome in state.done)
    return f"{run}{where}; {state.mismatches} of {cells} cells differ from what the scenarios expect"


def summary_text(state: LabState) -> str:
    """What each rule catches so far, what slipped through, gates that could not run."""
    done = state.done
    if not done:
        return ""
    errors = [f"{o.scenario.name}: the gate could not run: {o.error}" for o in done if o.error]
    return "\n".join([summary(done), *errors])
