"""Arithmetic the rest of the code base relies on."""


def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def days_in_year(year):
    """How many days `year` has in the Gregorian calendar."""
    return 366 if year % 4 == 0 and year % 100 != 0 else 365
