"""Which tests head added or changed, by the diff's lines: only
those run again after run 1, not every test of a file head touched."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gatetui.gate.diff.changed_tests import ChangedTests
from gatetui.git.snapshot import Snapshot

PATH = "tests/test_x.py"
BASE = """import sys

import pkg


def test_lazy():
    # importing pkg must not load its table
    assert "pkg.table" not in sys.modules
    pkg.table
    assert "pkg.table" in sys.modules


@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n


class TestK:
    def test_one(self):
        assert pkg.one() == 1

    def test_two(self):
        assert pkg.two() == 2
"""
ALL = ["test_lazy", "test_param", "TestK::test_one", "TestK::test_two"]


def tree(text: str | None) -> Snapshot:
    return Snapshot.of_files({} if text is None else {PATH: text})


def changed(base: str | None, head: str | None, names: list[str] = ALL) -> list[str]:
    """Which of `names` (tests of PATH) count as changed from `base` to `head`."""
    which = ChangedTests(tree(base), tree(head))
    return [n for n in names if which(f"{PATH}::{n}")]


def test_a_test_added_beside_others_is_the_only_one_changed() -> None:
    head = BASE.replace("\n\n@pytest", "\n\ndef test_new():\n    assert pkg.table\n\n\n@pytest")
    assert changed(BASE, head, [*ALL, "test_new"]) == ["test_new"]


def test_a_comment_outside_every_test_changes_none() -> None:
    head = BASE.replace("import pkg\n", "import pkg  # the package under test\n")
    assert changed(BASE, head) == []


def test_a_comment_inside_a_test_changes_that_test() -> None:
    head = BASE.replace("# importing pkg must not load its table", "# importing pkg loads no table")
    assert changed(BASE, head) == ["test_lazy"]


def test_a_line_removed_from_a_test_changes_it() -> None:
    head = BASE.replace("    pkg.table\n", "")
    assert changed(BASE, head) == ["test_lazy"]


def test_a_method_changes_alone_not_its_class() -> None:
    head = BASE.replace("pkg.two() == 2", "pkg.two() == 2.0")
    assert changed(BASE, head) == ["TestK::test_two"]


def test_a_changed_decorator_changes_its_test() -> None:
    head = BASE.replace("[1, 2]", "[1, 2, 3]")
    assert changed(BASE, head) == ["test_param"]


def test_a_new_file_changes_all_and_an_untouched_one_none() -> None:
    assert changed(None, BASE) == ALL
    assert changed(BASE, BASE) == []


def test_a_file_that_does_not_parse_changes_all_of_it() -> None:
    """Where the scanner cannot say where a test ends, the file's rule stands."""
    head = BASE.replace("def test_two(self):", "def test_two(self:")
    assert changed(BASE, head) == ALL


def test_a_test_the_scanner_cannot_find_follows_its_file() -> None:
    """An inherited test's id names a file that does not define it."""
    head = BASE + "\n# more\n"
    assert changed(BASE, head, ["TestChild::test_inherited"]) == ["TestChild::test_inherited"]
    assert changed(BASE, BASE, ["TestChild::test_inherited"]) == []


def test_windows_line_endings_do_not_change_every_line() -> None:
    crlf = BASE.replace("\n", "\r\n")
    assert changed(crlf, crlf.replace("pkg.one() == 1", "pkg.one() == 1.0")) == ["TestK::test_one"]


def body(index: int, value: int) -> str:
    return f"def test_{index}():\n    value = {value}\n    assert value == {value}\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(2, 8).flatmap(
        lambda n: st.tuples(st.just(n), st.sets(st.integers(0, n - 1)), st.sets(st.integers(0, n)), st.integers(0, 2))
    )
)
def test_exactly_the_edited_and_added_tests_change(case: tuple[int, set[int], set[int], int]) -> None:
    """Any tests edited, comments put between any of them, tests added at
    the end: the edited and added ones change, no other."""
    count, edited, commented, added = case
    base = "\n\n".join(body(i, i) for i in range(count))
    parts = []
    for i in range(count):
        comment = "# a note between tests\n" if i in commented else ""
        parts.append(comment + body(i, i + 100 if i in edited else i))
    parts += [body(count + j, 0) for j in range(added)]
    head = "\n\n".join(parts) + ("\n# the end\n" if count in commented else "")
    names = [f"test_{i}" for i in range(count + added)]
    assert changed(base, head, names) == [f"test_{i}" for i in sorted(edited)] + names[count:]
