from calendarlib import is_leap_year

# Years already checked, kept between tests to save time.
_checked = []


def test_checked_years_are_remembered():
    _checked.append((2024, is_leap_year(2024)))
    assert _checked == [(2024, True)]
