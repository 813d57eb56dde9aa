"""The demo's spotlight (which run the pane shows) and its scenario notice,
as plain functions of the supervisor's records: no screen needed."""

from __future__ import annotations

from gatetui.supervise.run_states import RunState
from gatetui.supervise.runs import Branch, Run
from gatetui.tui.follow import Spotlight
from gatetui.tui.widgets.notice import Notices


def branch(name: str, status: RunState, started: float = 0.0, finished: float | None = None) -> Branch:
    run = Run(f"run-{name}", f"agent/{name}", "c" * 40, status, started_at=started, finished_at=finished)
    return Branch(f"agent/{name}", "c" * 40, runs=[run])


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_queued_run_is_never_shown_and_nothing_to_show_moves_nothing() -> None:
    spotlight = Spotlight(clock=Clock())
    queued = [branch("a", RunState.QUEUED), Branch("agent/b", "d" * 40, at_base=True)]
    assert spotlight.moved(queued) is None
    assert spotlight.moved([*queued, branch("c", RunState.RUNNING)]) == "agent/c"


def test_a_fresh_verdict_holds_the_pane_then_the_run_gating_takes_it() -> None:
    clock = Clock()
    spotlight = Spotlight(hold=8.0, clock=clock)
    a, b = branch("a", RunState.RUNNING, started=1.0), branch("b", RunState.RUNNING, started=2.0)
    assert spotlight.moved([a, b]) == "agent/b"  # both seen at once: the one that started last
    assert spotlight.moved([a, b]) is None  # unchanged: a person who looked elsewhere stays there
    a.runs[0].status = RunState.FAIL
    clock.now += 1
    assert spotlight.moved([a, b]) == "agent/a"  # its verdict, beside its notice
    c = branch("c", RunState.RUNNING, started=3.0)  # the next gate starts as a's slot frees
    clock.now += 7
    assert spotlight.moved([a, b, c]) is None  # a's verdict is held for 8 s
    clock.now += 1.5
    assert spotlight.moved([a, b, c]) == "agent/c"  # then the run that began gating last


def test_the_newer_of_two_verdicts_wins_and_the_last_verdict_stays() -> None:
    clock = Clock()
    spotlight = Spotlight(hold=8.0, clock=clock)
    a, b = branch("a", RunState.RUNNING), branch("b", RunState.RUNNING)
    spotlight.moved([a, b])
    b.runs[0].status = RunState.PASS
    assert spotlight.moved([a, b]) == "agent/b"
    a.runs[0].status = RunState.REVIEW
    clock.now += 2
    assert spotlight.moved([a, b]) == "agent/a"
    clock.now += 60
    assert spotlight.moved([a, b]) is None  # nothing gating: the newest verdict stays


def test_runs_from_history_show_the_latest_finished() -> None:
    old, new = branch("old", RunState.FAIL, finished=50.0), branch("new", RunState.PASS, finished=90.0)
    assert Spotlight(clock=Clock()).moved([new, old]) == "agent/new"


def test_the_notice_waits_for_the_verdict_and_says_whether_it_is_the_expected_one() -> None:
    notices = Notices({"agent/a": "Skip marker: the agent skipped the test"}, {"agent/a": "fail"})
    a = branch("a", RunState.RUNNING).runs[0]
    assert notices.text("agent/a", a) == ""
    a.status = RunState.FAIL
    assert notices.text("agent/a", a) == (
        "scenario (expects fail, as the gate said): Skip marker: the agent skipped the test"
    )
    a.status = RunState.PASS
    assert notices.text("agent/a", a).startswith("scenario (expects fail, the gate said pass): ")
    assert notices.text("agent/other", a) == "" and notices.text("agent/a", None) == ""
    a.status = RunState.CANCELLED
    assert notices.text("agent/a", a) == ""
