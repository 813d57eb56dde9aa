"""Public holidays that fall on the same date every year, by (month, day).

Loaded on first use of `calendarlib.holidays`: see calendarlib/__init__.py.
"""

from __future__ import annotations

FIXED = {
    (1, 1): "New Year's Day",
    (12, 25): "Christmas Day",
}


def holiday(month: int, day: int) -> str | None:
    """The name of the fixed-date holiday on `month`/`day`, or None."""
    return FIXED.get((month, day))
