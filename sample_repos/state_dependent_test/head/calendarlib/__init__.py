"""Leap years, month lengths and public holidays in the Gregorian calendar.

The holiday table loads on first use (`calendarlib.holidays`), so a program
that only asks about leap years never pays for it.
"""

from importlib import import_module

from calendarlib.core import days_in_month, is_leap_year

__all__ = ["days_in_month", "holidays", "is_leap_year"]


def __getattr__(name: str) -> object:
    if name == "holidays":
        return import_module("calendarlib.holidays")
    raise AttributeError(f"module 'calendarlib' has no attribute {name!r}")
