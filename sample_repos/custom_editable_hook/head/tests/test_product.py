from mathlib import product


def test_product():
    assert product([2, 3, 4]) == 24
