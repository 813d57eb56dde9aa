"""The records the test-file scanners share: a test definition and a marker hit.

`diffscan` gathers a change's findings from the per-language scanners
(`python_tests`, `js_tests`), which in turn build on the code views
(`codeview`). All of them speak of `TestDef` and `MarkerHit`, so the two
live here, below every one of them, where importing them makes no cycle.
`diffscan` still exports both.

Pure: stdlib only, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

__all__ = ["MarkerHit", "TestDef"]

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
    # 1-based: which tests a change touched (gate/changed_tests.py). None: the
    # scanner cannot tell (a file that does not parse, a language that does
    # not say), and every test of a changed file counts as changed. Not part
    # of a definition's identity.
    span: tuple[int, int] | None = field(default=None, compare=False)

    @property
    def qualified(self) -> str:
        """`path::name`, the form pytest and the gate's details use."""
        return f"{self.path}::{self.name}"
