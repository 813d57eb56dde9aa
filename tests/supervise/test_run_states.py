"""A run's states: every move the supervisor makes is in one table, and a
move outside it is a bug that says so."""

from __future__ import annotations

import json

import pytest

from gatetui.errors import GateError, IllegalTransition
from gatetui.gate.checks import Verdict
from gatetui.gate.cost import Cost
from gatetui.gate.events import RunFinished, RunStarted
from gatetui.gate.sealing.digests import Digests
from gatetui.supervise.run_states import TRANSITIONS, RunState
from gatetui.supervise.runs import Branch, Run

S = RunState
STARTED = RunStarted("r", "/repo", "main", "agent/x", "b" * 40, "h" * 40, "local", "python", ())


def finished(verdict: Verdict) -> RunFinished:
    return RunFinished(verdict, (), Digests("b" * 40, "h" * 40), Cost(), 1.0)


def test_every_state_has_its_moves_and_they_lead_to_states() -> None:
    assert set(TRANSITIONS) == set(RunState)
    assert {str(s) for s in RunState} == {"queued", "running", "pass", "fail", "review", "error", "cancelled"}
    assert TRANSITIONS[S.QUEUED] == {S.RUNNING, S.CANCELLED, S.ERROR}
    assert TRANSITIONS[S.CANCELLED] == {S.CANCELLED}


@pytest.mark.parametrize(
    ("state", "in_progress", "judged", "answers", "stopped"),
    [
        (S.QUEUED, True, False, True, False),
        (S.RUNNING, True, False, True, False),
        (S.PASS, False, True, True, False),
        (S.FAIL, False, True, True, False),
        (S.REVIEW, False, True, True, False),
        (S.ERROR, False, True, False, True),
        (S.CANCELLED, False, False, False, True),
    ],
)
def test_what_each_state_means(state: RunState, in_progress: bool, judged: bool, answers: bool, stopped: bool) -> None:
    assert (state.in_progress, state.judged, state.answers_for_head, state.stopped) == (
        in_progress,
        judged,
        answers,
        stopped,
    )


@pytest.mark.parametrize(
    ("start", "to"),
    [(S.QUEUED, S.PASS), (S.CANCELLED, S.RUNNING), (S.PASS, S.RUNNING), (S.ERROR, S.PASS), (S.FAIL, S.REVIEW)],
)
def test_a_move_outside_the_table_is_a_bug_not_a_gate_error(start: RunState, to: RunState) -> None:
    run = Run("r", "agent/x", "h" * 40, status=start)
    with pytest.raises(IllegalTransition) as raised:
        run.move_to(to)
    assert (str(raised.value), run.status, isinstance(raised.value, GateError)) == (
        f"a run cannot move from {start} to {to}",
        start,
        False,
    )


def test_a_run_moves_by_the_gates_events() -> None:
    run = Run("r", "agent/x", "h" * 40)
    seen = [run.status]
    for event in (STARTED, finished(Verdict.REVIEW)):
        run.apply(event, 0.0)
        seen.append(run.status)
    assert seen == [S.QUEUED, S.RUNNING, S.REVIEW]
    assert all(isinstance(state, RunState) for state in seen)


def test_a_cancelled_run_stops_as_cancelled_and_is_kept_as_such() -> None:
    run = Run("r", "agent/x", "h" * 40, started_at=10.0)
    run.move_to(S.CANCELLED)
    run.stop(S.CANCELLED, "", 12.0)
    record = json.loads(json.dumps(run.stopped_record("/repo")))
    assert (run.status, run.stopped, run.seconds, record["verdict"]) == (S.CANCELLED, True, 2.0, "cancelled")
    assert Run.from_record(record).status is S.CANCELLED


def test_a_state_given_as_text_is_the_state_and_an_unknown_record_reads_as_an_error() -> None:
    assert Run("r", "agent/x", "h", status="review").status is S.REVIEW  # type: ignore[arg-type]
    assert [RunState.of_record(v) for v in ("pass", "cancelled", "judged", None)] == [
        S.PASS,
        S.CANCELLED,
        S.ERROR,
        S.ERROR,
    ]
    assert [RunState.of_verdict(v) for v in Verdict] == [S.PASS, S.FAIL, S.REVIEW, S.ERROR]


def test_a_branch_gates_a_head_again_only_when_its_run_does_not_answer_for_it() -> None:
    answers = {}
    for state in RunState:
        branch = Branch("agent/x", "h", runs=[Run("r", "agent/x", "h", status=state)])
        answers[state] = (branch.has_run("h"), branch.has_run("other"))
    assert answers == {
        S.QUEUED: (True, False),
        S.RUNNING: (True, False),
        S.PASS: (True, False),
        S.FAIL: (True, False),
        S.REVIEW: (True, False),
        S.ERROR: (False, False),
        S.CANCELLED: (False, False),
    }
