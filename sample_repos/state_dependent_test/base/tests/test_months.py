import pytest

from calendarlib import days_in_month


def test_thirty_one_day_months():
    assert [days_in_month(2023, m) for m in (1, 3, 5, 7, 8, 10, 12)] == [31] * 7


def test_thirty_day_months():
    assert [days_in_month(2023, m) for m in (4, 6, 9, 11)] == [30] * 4


def test_february():
    assert days_in_month(2023, 2) == 28
    assert days_in_month(2024, 2) == 29


def test_month_out_of_range():
    with pytest.raises(ValueError):
        days_in_month(2023, 13)
