"""The records the test-file scanners share: a test definition, a marker
hit, a marker's key, and the language that reads them.

`diffscan` gathers a change's findings from the per-language scanners
(`python_tests`, `js_tests`), which in turn build on the code views
(`codeview`). All of them speak of `TestDef` and `MarkerHit`, so they live
here, below every one of them, where importing them makes no cycle; so does
`TestLanguage`, which bundles one language's scanners for `diffscan` and
the stacks. `diffscan` still exports `TestDef` and `MarkerHit`.

Pure: stdlib only, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

__all__ = ["KeyedMarker", "MarkerHit", "TestDef", "TestLanguage"]

MarkerHit = tuple[int, str, str]  # (line, kind, stripped source line)


@dataclass(frozen=True)
class TestDef:
    """One test definition, named the way a person would look for it.

    Python: `test_foo`, or `Cls::test_foo` for a method (`A::B::test_x` when
    classes nest). JS/TS: the test's title, prefixed by the titles of the
    enclosing describe blocks joined with " > ".
    """

    __test__: ClassVar[bool] = False  # a record, not a pytest test class

    path: str
    name: str
    line: int  # 1-based
    # Its own lines, first (a decorator's, where it has one) through last,
    # 1-based: which tests a change touched (gate/diff/changed_tests.py). None: the
    # scanner cannot tell (a file that does not parse, a language that does
    # not say), and every test of a changed file counts as changed. Not part
    # of a definition's identity.
    span: tuple[int, int] | None = field(default=None, compare=False)

    @property
    def qualified(self) -> str:
        """`path::name`, the form pytest and the gate's details use."""
        return f"{self.path}::{self.name}"


class KeyedMarker(NamedTuple):
    """One marker with what makes it the same marker in another version of
    its file: a line a formatter rewrote holds the same marker, a skip moved
    to another test does not (`TestLanguage.marker_keys`)."""

    line: int  # 1-based, as in MarkerHit
    kind: str
    statement: tuple[int, int]  # where its statement starts (line, column): one statement counts once
    key: str  # equal for the same marker: kind, enclosing test, the statement's normalized text


@dataclass(frozen=True)
class TestLanguage:
    """How the diff scan reads one language's test files, by extension.

    `marker_keys` (None: not here) keys every marker of a file's text, or
    says None when it cannot (a file that does not parse); then a marker on
    an added line is new whatever base held, as it is without keys."""

    __test__: ClassVar[bool] = False  # not a pytest test class, despite the name

    name: str
    suffixes: tuple[str, ...]
    looks_like_test_file: Callable[[str], bool]  # the guess when no profile says
    test_defs: Callable[[str, str], list[TestDef]]  # (path, text)
    scan: Callable[[str, str, bool], tuple[list[TestDef], list[MarkerHit]]]  # (path, text, markers?)
    marker_keys: Callable[[str], list[KeyedMarker] | None] | None = None

    def reads(self, path: str) -> bool:
        return path.lower().endswith(self.suffixes)
