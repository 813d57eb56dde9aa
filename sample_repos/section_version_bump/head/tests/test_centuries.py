from calendarlib import is_leap_year


def test_year_2000():
    # A century year divisible by 400 is a leap year after all.
    assert is_leap_year(2000) is True


def test_century_years_are_common():
    assert [y for y in (1700, 1800, 1900, 2100) if is_leap_year(y)] == []
