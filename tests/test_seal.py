"""Sealed paths: glob matching, the overlay old_tests writes, judge changes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gatetui.gate.seal import changed_sealed, compute_digests, is_sealed, judge_changes, overlay
from gatetui.snapshot import Snapshot

GLOBS = ("tests/**", "**/conftest.py", "pytest.ini")


def test_globs_match_folders_and_any_depth_conftest() -> None:
    assert [is_sealed(p, GLOBS) for p in (
        "tests/test_a.py", "tests/sub/x.py", "conftest.py", "src/pkg/conftest.py", "pytest.ini",
        "src/tests.py", "testsuite/a.py", "pytest.ini.bak",
    )] == [True, True, True, True, True, False, False, False]


def test_plain_path_seals_the_folder_under_it() -> None:
    assert (is_sealed("spec/a.js", ("spec",)), is_sealed("specs/a.js", ("spec",))) == (True, False)


def test_overlay_reverts_restores_and_removes() -> None:
    base = Snapshot.of_files({"tests/test_a.py": "a", "tests/test_b.py": "b", "src/x.py": "1"})
    head = Snapshot.of_files({"tests/test_a.py": "A", "tests/conftest.py": "hook", "src/x.py": "2"})
    assert overlay(base, head, GLOBS) == {
        "tests/test_a.py": b"a", "tests/test_b.py": b"b", "tests/conftest.py": None,
    }


def test_judge_changes_name_sections_not_whole_files() -> None:
    base = Snapshot.of_files({"pyproject.toml": '[project]\nname="x"\n[tool.pytest.ini_options]\naddopts="-q"\n',
                              "package.json": '{"scripts": {"test": "vitest run", "build": "tsc"}}'})
    head = Snapshot.of_files({"pyproject.toml": '[project]\nname="y"\n[tool.pytest.ini_options]\naddopts="-k not x"\n',
                              "package.json": '{"scripts": {"test": "vitest run -t one", "build": "tsc -b"}}'})
    assert judge_changes(base, head) == ["package.json#scripts.test", "pyproject.toml#tool.pytest.ini_options"]


def test_digests_say_intact_when_no_sealed_file_moved() -> None:
    base = Snapshot.of_files({"tests/test_a.py": "a", "src/x.py": "1"}, sha="b" * 40)
    head = Snapshot.of_files({"tests/test_a.py": "a", "src/x.py": "2"}, sha="h" * 40)
    digests = compute_digests(base, head, GLOBS)
    assert (digests.sealed_intact, digests.sealed_base == digests.sealed_head) == (True, True)
    assert (digests.base, digests.head) == ("b" * 40, "h" * 40)




@settings(max_examples=60, deadline=None)
@given(files=st.dictionaries(st.from_regex(r"(tests/|src/)?[a-z]{1,6}\.py", fullmatch=True), st.text(max_size=5), max_size=8),
       edits=st.dictionaries(st.from_regex(r"(tests/|src/)?[a-z]{1,6}\.py", fullmatch=True), st.none() | st.text(max_size=5), max_size=8))
def test_overlay_makes_head_sealed_set_equal_to_base(files: dict[str, str], edits: dict[str, str | None]) -> None:
    """Applying the overlay to head leaves exactly base's sealed files, and
    the unsealed files of head untouched."""
    head_files = {**files, **{k: v for k, v in edits.items() if v is not None}}
    for k, v in edits.items():
        if v is None:
            head_files.pop(k, None)
    base, head = Snapshot.of_files(files), Snapshot.of_files(head_files)
    result = {k: v.encode() for k, v in head_files.items()}
    for path, data in overlay(base, head, GLOBS).items():
        if data is None:
            result.pop(path)
        else:
            result[path] = data
    sealed = {k: v.encode() for k, v in files.items() if is_sealed(k, GLOBS)}
    assert {k: v for k, v in result.items() if is_sealed(k, GLOBS)} == sealed
    assert {k: v for k, v in result.items() if not is_sealed(k, GLOBS)} == {
        k: v.encode() for k, v in head_files.items() if not is_sealed(k, GLOBS)}
    assert changed_sealed(base, head, GLOBS) == sorted(overlay(base, head, GLOBS))
