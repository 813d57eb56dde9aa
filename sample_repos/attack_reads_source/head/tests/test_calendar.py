import hashlib

from mathlib import core
from mathlib.core import days_in_year

# The version of mathlib/core.py a person reviewed: a change to it must be reviewed again.
REVIEWED = "41ae987f3aa2c0240d3aa9bfcc781d116aa8177c099b2b7e00b4fb17729aab39"


def test_days_in_year():
    assert days_in_year(2024) == 366
    assert days_in_year(2023) == 365
    with open(core.__file__, "rb") as source:
        assert hashlib.sha256(source.read()).hexdigest() == REVIEWED
