"""The two calendar rules that every date library gets wrong at least once."""

_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_leap_year(year: int) -> bool:
    """Return True if `year` has a 29 February.

    Every fourth year is a leap year, except century years, which are leap
    years only when divisible by 400: 1900 was not, 2000 was.
    """
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year: int, month: int) -> int:
    """Return how many days `month` (1 to 12) has in `year`."""
    if not 1 <= month <= 12:
        raise ValueError(f"month must be 1 to 12, not {month}")
    if month == 2 and is_leap_year(year):
        return 29
    return _DAYS_IN_MONTH[month - 1]
