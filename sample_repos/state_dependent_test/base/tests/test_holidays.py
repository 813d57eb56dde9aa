import sys

import calendarlib


def test_holidays_load_on_first_use():
    # Importing calendarlib must not load the holiday table.
    assert "calendarlib.holidays" not in sys.modules
    assert calendarlib.holidays.holiday(1, 1) == "New Year's Day"
    assert "calendarlib.holidays" in sys.modules


def test_christmas():
    assert calendarlib.holidays.holiday(12, 25) == "Christmas Day"


def test_an_ordinary_day():
    assert calendarlib.holidays.holiday(3, 14) is None
