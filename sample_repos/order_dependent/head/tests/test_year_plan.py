"""The agent's tests for a year's running day count, month by month.

Each test adds its month to PLAN and checks the running total, so each one
passes only when the months before it have already run, in file order.
"""

from calendarlib import days_in_month

PLAN: dict[int, int] = {}


def plan(month: int) -> int:
    PLAN[month] = days_in_month(2024, month)
    return sum(PLAN.values())


def test_january():
    assert plan(1) == 31


def test_february():
    assert plan(2) == 60


def test_march():
    assert plan(3) == 91


def test_april():
    assert plan(4) == 121


def test_may():
    assert plan(5) == 152


def test_june():
    assert plan(6) == 182


def test_july():
    assert plan(7) == 213


def test_august():
    assert plan(8) == 244
