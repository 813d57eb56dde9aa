"""Which changed lines are a function's header (they run when it is
defined, at import), and where the body whose tests judge them is."""

from __future__ import annotations

import pytest

from gatetui.stacks.python.function_headers import headers

SOURCE = '''import functools

LIMIT = 3


@functools.lru_cache(
    maxsize=LIMIT)
@staticmethod
def clamp(n,
          low=0,
          high=LIMIT):
    """Docstring."""
    return max(low, min(n, high))


def double(n): return n * 2


class Box:
    SIZE = 3

    def grow(self, by=1):
        def inner(k=by):
            return k
        return inner()


async def fetch(url, retries=2):
    return url
'''


def test_each_header_line_is_given_its_functions_body() -> None:
    assert headers(SOURCE, frozenset(range(1, 40))) == {
        6: (12, 13),
        7: (12, 13),
        8: (12, 13),
        9: (12, 13),
        10: (12, 13),
        11: (12, 13),  # decorators to the body
        16: (16, 16),  # a one-line def is its own body's line
        22: (23, 25),
        23: (24, 24),  # a nested def's header is its own, inside its parent's body
        28: (29, 29),
    }


@pytest.mark.parametrize("lines", [frozenset({1, 3, 12, 13, 19, 20, 24, 25}), frozenset()])
def test_module_class_and_body_lines_are_no_header(lines: frozenset[int]) -> None:
    assert headers(SOURCE, lines) == {}


def test_text_that_does_not_parse_has_none() -> None:
    assert headers("def broken(:\n    pass\n", frozenset({1})) == {}
