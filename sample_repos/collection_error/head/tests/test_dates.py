import datetime

from freezegun import freeze_time

from calendarlib import is_leap_year


@freeze_time("2024-02-29")
def test_today_is_in_a_leap_year():
    assert is_leap_year(datetime.date.today().year) is True
