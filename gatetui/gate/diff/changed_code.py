"""The library lines head adds or changes: what `covered` and `bites` judge.

Read from the diff (base...head), never from a sandbox: the files of the
stack's language that are not test files and that head's distribution ships
(the stack reads which from head's packaging configuration: a docs conf.py
or an examples/ script is no library code), the lines of head's version
that base's does not account for, and of those only the statements (the
stack's own analysis: no blank line, comment or docstring). Statements
changed in the other code files are only counted, for the detail to say.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from gatetui.gate.diff.scan import added_lines
from gatetui.git.changes import FileChange
from gatetui.git.snapshot import Snapshot
from gatetui.globs import matches, under_any
from gatetui.stacks.base import LineCoverage
from gatetui.stacks.codeview import normalize
from gatetui.stacks.profile import Profile

MAX_FILE_BYTES = 2 << 20  # a bigger file is generated, not written: not judged line by line
SHOWN_OUTSIDE = 3  # files named among the lines left out


@dataclass(frozen=True)
class ChangedCode:
    """Per file, the statements head added or changed (first lines), and
    the text of head's version they are lines of; of those lines, the ones
    in a function's header, each with the first and last lines of its body
    (the stack's analysis: they run when the function is defined)."""

    lines: Mapping[str, frozenset[int]] = field(default_factory=dict)
    texts: Mapping[str, str] = field(default_factory=dict)
    outside: Mapping[str, int] = field(default_factory=dict)  # statements changed outside what ships, per file
    headers: Mapping[str, Mapping[int, tuple[int, int]]] = field(default_factory=dict)

    @property
    def files(self) -> frozenset[str]:
        return frozenset(self.lines)

    def count(self) -> int:
        return sum(len(lines) for lines in self.lines.values())

    def pairs(self) -> list[tuple[str, int]]:
        """Every changed line as (path, line), in file and line order."""
        return [(path, line) for path in sorted(self.lines) for line in sorted(self.lines[path])]

    def left_out(self) -> str:
        """What was not judged, for a detail: "" when every changed statement was."""
        if not self.outside:
            return ""
        count, files = sum(self.outside.values()), sorted(self.outside)
        more = f" and {len(files) - SHOWN_OUTSIDE} more" if len(files) > SHOWN_OUTSIDE else ""
        return (
            f"{count} changed {'line' if count == 1 else 'lines'} outside the project's packages not judged "
            f"({', '.join(files[:SHOWN_OUTSIDE])}{more})"
        )


def changed_code(
    changes: list[FileChange], profile: Profile, sealed: tuple[str, ...], probe: LineCoverage, head: Snapshot
) -> ChangedCode:
    """The statements head adds or changes in its library files (none of
    the `sealed` globs, which old_tests puts back from base)."""
    lines: dict[str, frozenset[int]] = {}
    texts: dict[str, str] = {}
    outside: dict[str, int] = {}
    headers: dict[str, Mapping[int, tuple[int, int]]] = {}
    shipped = probe.shipped(head)
    for change in changes:
        path = change.new_path
        if path is None or change.new_data is None or not code_file(path, profile, sealed, probe):
            continue
        if path in profile.install.build_generated:  # the build writes it (a version file): no test's to run
            continue
        if len(change.new_data) > MAX_FILE_BYTES:
            continue
        new = _text(change.new_data)
        old = _text(change.old_data) if change.old_data is not None else ""
        found = probe.statements(new, frozenset(added_lines(old, new)))
        if found and shipped is not None and not shipped(path):
            outside[path] = len(found)
        elif found:
            lines[path], texts[path] = found, new
            headers[path] = MappingProxyType(dict(probe.headers(new, found)))
    return ChangedCode(
        MappingProxyType(lines), MappingProxyType(texts), MappingProxyType(outside), MappingProxyType(headers)
    )


def code_file(path: str, profile: Profile, sealed: tuple[str, ...], probe: LineCoverage) -> bool:
    """Code of the stack's language that no test runner collects, that is
    not sealed with the tests (a conftest.py, a helper base's tests import),
    outside the folders the install hands on (an environment committed by
    mistake). Whether head's distribution ships it is asked apart."""
    return (
        probe.code_file(path)
        and not profile.is_test_file(path)
        and not matches(path, sealed)
        and not under_any(path, profile.install.environment)
    )


def wanted(profile: Profile, sealed: tuple[str, ...], probe: LineCoverage) -> Callable[[list[str]], bool]:
    """For GitRepo.changes: read the contents of code files only."""
    return lambda paths: any(code_file(p, profile, sealed, probe) for p in paths)


def _text(data: bytes) -> str:
    return normalize(data.decode("utf-8", errors="replace"))


def ranges(lines: list[int]) -> list[str]:
    """12, 13, 14, 20 -> ["12-14", "20"]: lines as a reviewer reads them."""
    out: list[str] = []
    for line in sorted(lines):
        if out and _last(out[-1]) == line - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{line}"
        else:
            out.append(str(line))
    return out


def _last(span: str) -> int:
    return int(span.rsplit("-", 1)[-1])
