from calendarlib import days_in_month, is_leap_year


def test_1800_is_common():
    assert is_leap_year(1800) is False


def test_2000_is_leap():
    assert is_leap_year(2000) is True


def test_answers_are_booleans():
    assert isinstance(is_leap_year(2023), bool)


def test_february_1900():
    assert days_in_month(1900, 2) == 28


def test_february_2024():
    assert days_in_month(2024, 2) == 29
