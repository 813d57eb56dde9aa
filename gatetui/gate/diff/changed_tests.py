"""Which tests head added or changed, by their own lines: the tests the
reruns repeat (gate/judging/reruns.py).

A test counts as changed when its definition is new at head, or when its
own lines (TestDef.span: its decorators, def and body; a method's, not its
class's) differ from the same test's at base: a line head added, changed
or removed among them. A test whose file changed elsewhere (a comment, a
helper, another test added beside it) is not: repeating every test of a
touched file in one process named honest tests flaky, such as one that
checks what only a fresh process shows (a module not imported yet) and
passes once per process. Where the stack's scanner cannot say where a test
ends, or cannot find it (a test a class inherits from elsewhere), every
test of a changed file counts as changed, as before.

The test's lines are compared with base's, not located through a line diff
(stacks/lines.py): where a new test ends as the test above it does (a
closing `pass`), a diff may as well call the upper test's last line the
added one, and name a test head never touched.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gatetui.git.snapshot import Snapshot
from gatetui.stacks.codeview import normalize
from gatetui.stacks.registry import language_of
from gatetui.stacks.testdefs import TestDef


@dataclass
class ChangedTests:
    """`changed(test_id)` for function-level ids (`path::name`, `path::Cls::name`),
    each file read and scanned once."""

    base: Snapshot
    head: Snapshot
    _files: dict[str, _FileChange | None] = field(default_factory=dict)

    def __call__(self, test_id: str) -> bool:
        path, _, name = test_id.partition("::")
        if path not in self._files:
            self._files[path] = self._read(path)
        change = self._files[path]
        return change is not None and change.touches(name)

    def _read(self, path: str) -> _FileChange | None:
        """The file's change, or None when head did not change it."""
        base, head = self.base, self.head
        if path in base and path in head and base.ident(path) == head.ident(path):
            return None
        old, new = base.text(path), head.text(path)
        language = language_of(path)
        if old is None or new is None or language is None:
            return _FileChange({}, {})  # new, gone or unread: all of it changed
        old, new = normalize(old), normalize(new)
        return _FileChange(
            _own_texts(language.test_defs(path, old), old), _own_texts(language.test_defs(path, new), new)
        )


def _own_texts(defs: list[TestDef], text: str) -> dict[str, str | None]:
    """Each test's own lines, by name (None: the scanner cannot tell where
    it ends); of two with one name the later, which is the one the module
    binds and the runner collects."""
    lines = text.split("\n")
    return {d.name: None if d.span is None else "\n".join(lines[d.span[0] - 1 : d.span[1]]) for d in defs}


@dataclass(frozen=True)
class _FileChange:
    """One changed file's tests at base and head, each as its own lines."""

    old: dict[str, str | None]
    new: dict[str, str | None]

    def touches(self, name: str) -> bool:
        """New at head, changed in its own lines, or not told apart from
        its file (not found, or no span: every test of the file changed)."""
        now, before = self.new.get(name), self.old.get(name)
        return now is None or before is None or now != before
