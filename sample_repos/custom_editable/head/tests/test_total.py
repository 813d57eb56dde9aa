from mathlib import total


def test_total():
    assert total([1, 2, 3]) == 6


def test_total_of_nothing():
    assert total([]) == 0
