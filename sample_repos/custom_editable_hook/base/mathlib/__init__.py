"""Small sums and products."""


def total(values):
    """The sum of `values`; 0 for none."""
    result = 0
    for value in values:
        result += value
    return result
