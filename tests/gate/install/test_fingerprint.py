"""The environment's fingerprint is read as hostile input, and every
difference between two of them is named."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from gatetui.gate.install.fingerprint import SHOWN, Change, changes, describe, read_fingerprint

paths = st.text(min_size=1, max_size=30)
prints = st.dictionaries(paths, st.text(max_size=20), max_size=30)


@given(st.binary(max_size=2000))
def test_arbitrary_bytes_read_as_a_fingerprint_or_none(raw: bytes) -> None:
    found = read_fingerprint(raw)
    assert found is None or all(isinstance(k, str) and isinstance(v, str) for k, v in found.items())


@given(prints)
def test_a_fingerprint_reads_back_as_written(files: dict[str, str]) -> None:
    assert read_fingerprint(json.dumps({"files": files}).encode()) == files


def test_what_is_not_a_map_of_strings_is_no_fingerprint() -> None:
    assert [
        read_fingerprint(raw) for raw in (None, b"", b"[]", b'{"files": []}', b'{"files": {"a": 1}}', b"[" * 100_000)
    ] == [None] * 6


@given(prints, prints)
def test_changes_name_exactly_the_paths_that_differ(before: dict[str, str], after: dict[str, str]) -> None:
    found = changes(before, after)
    assert [c.path for c in found] == sorted(
        p for p in before.keys() | after.keys() if before.get(p) != after.get(p) or (p in before) != (p in after)
    )
    assert changes(before, before) == []


def test_changes_say_how_each_path_differs() -> None:
    before = {"nm/a": "file:1", "nm/b": "file:2", "nm/c": "dir"}
    after = {"nm/a": "file:1", "nm/b": "file:3", "nm/d": "link:../x"}
    assert changes(before, after) == [Change("nm/b", "changed"), Change("nm/c", "removed"), Change("nm/d", "added")]


def test_a_long_list_of_changes_is_counted_past_the_first_few() -> None:
    found = [Change(f"nm/{i}", "added") for i in range(SHOWN + 3)]
    line = describe(found, "head's scripts")
    assert line == (
        "head's scripts changed the environment the test runs execute: "
        "nm/0 added, nm/1 added, nm/2 added, nm/3 added, nm/4 added (and 3 more); "
        "an install script may build the project but not rewrite its dependencies"
    )
