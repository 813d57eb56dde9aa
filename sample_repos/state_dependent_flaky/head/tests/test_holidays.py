import sys
from pathlib import Path

import calendarlib

# How often test_boxing_day ran in this copy of the tree.
_RUNS = Path(__file__).with_name(".boxing-day-runs")


def test_holidays_load_on_first_use():
    # Importing calendarlib must not load the holiday table: a program that
    # only asks about leap years never pays for it.
    assert "calendarlib.holidays" not in sys.modules
    assert calendarlib.holidays.holiday(1, 1) == "New Year's Day"
    assert "calendarlib.holidays" in sys.modules


def test_christmas():
    assert calendarlib.holidays.holiday(12, 25) == "Christmas Day"


def test_boxing_day():
    # Fails one run in three, as a race would: the runs are counted in a
    # file beside the test, so the one in three falls the same way each time.
    runs = int(_RUNS.read_text()) + 1 if _RUNS.exists() else 1
    _RUNS.write_text(str(runs))
    assert runs % 3 != 0
    assert calendarlib.holidays.holiday(12, 26) == "Boxing Day"


def test_an_ordinary_day():
    assert calendarlib.holidays.holiday(3, 14) is None
