"""The two calendar rules that every date library gets wrong at least once."""

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
    if month == 2:
        return 29 if is_leap_year(year) else 28
    # The rest alternate: 31 days in odd months, 30 in even ones.
    return 31 if month % 2 == 1 else 30
