from calendarlib import days_in_month, is_leap_year


def test_1800_is_common():
    assert is_leap_year(1800) is False


def test_2100_is_common():
    assert is_leap_year(2100) is False


def test_2000_is_leap():
    assert is_leap_year(2000) is True


def test_1600_is_leap():
    assert is_leap_year(1600) is True


def test_february_2023():
    assert days_in_month(2023, 2) == 28
