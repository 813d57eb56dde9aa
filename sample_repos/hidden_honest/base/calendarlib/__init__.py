"""Leap years and month lengths in the Gregorian calendar."""

from calendarlib.core import days_in_month, is_leap_year

__all__ = ["days_in_month", "is_leap_year"]
