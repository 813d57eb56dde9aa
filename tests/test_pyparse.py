"""Parsing from several threads at once never fails on valid code.

CPython 3.11's AST builder shares its recursion counter between threads: a
collection that runs a finalizer mid-parse can switch threads into another
parse and break it ("SystemError: AST constructor recursion depth mismatch").
The gate plans several branches at once in worker threads; this happened in
the suite's own runs.
"""

from __future__ import annotations

import ast
import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from gatetui.pyparse import parse_python

SOURCE = "def f():\n" + "".join(f"    x{i} = [[[{i}, ({i}, {{'a': [{i}]}})]]]\n" for i in range(300))


class Finalized:
    """Garbage whose finalizer runs Python code: a chance to switch threads."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        sum(range(50))


@contextmanager
def switching_often() -> Iterator[None]:
    threshold, interval = gc.get_threshold(), sys.getswitchinterval()
    gc.set_threshold(5)
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        sys.setswitchinterval(interval)


def test_parses_in_eight_threads_with_finalizers_running_all_succeed() -> None:
    results: list[object] = []

    def work() -> None:
        for _ in range(12):
            for _ in range(20):
                Finalized()
            try:
                results.append(parse_python(SOURCE))
            except SystemError as err:  # what ast.parse raised here without the lock
                results.append(err)

    with switching_often():
        threads = [threading.Thread(target=work) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert [type(r).__name__ for r in results] == ["Module"] * 96
    assert [len(r.body[0].body) for r in results] == [300] * 96  # type: ignore[attr-defined]


def test_invalid_source_is_none_and_warnings_stay_quiet() -> None:
    assert parse_python("def f(:\n") is None
    tree = parse_python("x = '\\d'\n")  # an invalid escape warns: silenced, still parsed
    assert ast.dump(tree.body[0].value) == "Constant(value='\\\\d')"  # type: ignore[union-attr, attr-defined]
