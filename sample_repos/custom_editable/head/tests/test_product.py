from mathlib import product


def test_product():
    assert product([2, 3, 4]) == 24


def test_product_of_nothing():
    assert product([]) == 1
