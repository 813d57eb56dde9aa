import pytest
from hypothesis import given
from hypothesis import strategies as st

from slugs.core import slugify, stamped


def test_words_are_joined_by_hyphens():
    assert slugify("Hello World") == "hello-world"


@pytest.mark.timeout(10)
def test_a_long_title_is_quick():
    assert slugify("a " * 10000).count("-") == 9999


@given(st.text())
def test_a_slug_has_no_spaces(title):
    assert " " not in slugify(title)


def test_a_stamp_is_the_clock_s_second(mocker):
    mocker.patch("slugs.core.time.time", return_value=1700000000.5)
    assert stamped("Hi there") == "hi-there-1700000000"


def test_punctuation_is_dropped():
    assert slugify("Hello, World! (2nd ed.)") == "hello-world-2nd-ed"
