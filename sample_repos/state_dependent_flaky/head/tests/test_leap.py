from calendarlib import is_leap_year


def test_common_year():
    assert is_leap_year(2023) is False


def test_every_fourth_year():
    assert is_leap_year(2024) is True


def test_recent_leap_years():
    leap = [year for year in range(2010, 2030) if is_leap_year(year)]
    assert leap == [2012, 2016, 2020, 2024, 2028]


def test_leap_day():
    # 1900 is divisible by 4, but a century year is a leap year only when it
    # is divisible by 400: there was no 29 February 1900.
    assert is_leap_year(1900) is False


def test_year_2000():
    # A century year divisible by 400 is a leap year after all.
    assert is_leap_year(2000) is True
