"""Sealed paths: glob matching, the overlay old_tests writes, judge changes."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatetui.config import SealRule
from gatetui.gate.sealing.digests import RuleDigest
from gatetui.gate.sealing.sealed import (
    changed_sealed,
    compute_digests,
    is_sealed,
    judge_changes,
    overlay,
    rule_digest,
    section_digest,
    section_value,
)
from gatetui.git.snapshot import Snapshot

GLOBS = ("tests/**", "**/conftest.py", "pytest.ini")


def test_globs_match_folders_and_any_depth_conftest() -> None:
    assert [
        is_sealed(p, GLOBS)
        for p in (
            "tests/test_a.py",
            "tests/sub/x.py",
            "conftest.py",
            "src/pkg/conftest.py",
            "pytest.ini",
            "src/tests.py",
            "testsuite/a.py",
            "pytest.ini.bak",
        )
    ] == [True, True, True, True, True, False, False, False]


def test_plain_path_seals_the_folder_under_it() -> None:
    assert (is_sealed("spec/a.js", ("spec",)), is_sealed("specs/a.js", ("spec",))) == (True, False)


def test_overlay_reverts_restores_and_removes() -> None:
    base = Snapshot.of_files({"tests/test_a.py": "a", "tests/test_b.py": "b", "src/x.py": "1"})
    head = Snapshot.of_files({"tests/test_a.py": "A", "tests/conftest.py": "hook", "src/x.py": "2"})
    assert overlay(base, head, GLOBS) == {"tests/test_a.py": b"a", "tests/test_b.py": b"b", "tests/conftest.py": None}


def test_judge_changes_name_sections_not_whole_files() -> None:
    base = Snapshot.of_files(
        {
            "pyproject.toml": '[project]\nname="x"\n[tool.pytest.ini_options]\naddopts="-q"\n',
            "package.json": '{"scripts": {"test": "vitest run", "build": "tsc"}}',
        }
    )
    head = Snapshot.of_files(
        {
            "pyproject.toml": '[project]\nname="y"\n[tool.pytest.ini_options]\naddopts="-k not x"\n',
            "package.json": '{"scripts": {"test": "vitest run -t one", "build": "tsc -b"}}',
        }
    )
    assert judge_changes(base, head) == ["package.json#scripts.test", "pyproject.toml#tool.pytest.ini_options"]


def test_digests_say_intact_when_no_sealed_file_moved() -> None:
    base = Snapshot.of_files({"tests/test_a.py": "a", "src/x.py": "1"}, sha="b" * 40)
    head = Snapshot.of_files({"tests/test_a.py": "a", "src/x.py": "2"}, sha="h" * 40)
    digests = compute_digests(base, head, GLOBS)
    assert (digests.sealed_intact, digests.sealed_base == digests.sealed_head) == (True, True)
    assert (digests.base, digests.head) == ("b" * 40, "h" * 40)


@settings(max_examples=60, deadline=None)
@given(
    files=st.dictionaries(
        st.from_regex(r"(tests/|src/)?[a-z]{1,6}\.py", fullmatch=True), st.text(max_size=5), max_size=8
    ),
    edits=st.dictionaries(
        st.from_regex(r"(tests/|src/)?[a-z]{1,6}\.py", fullmatch=True), st.none() | st.text(max_size=5), max_size=8
    ),
)
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
        k: v.encode() for k, v in head_files.items() if not is_sealed(k, GLOBS)
    }
    assert changed_sealed(base, head, GLOBS) == sorted(overlay(base, head, GLOBS))


# --- sections and rules -------------------------------------------------------

PYPROJECT = '[project]\nname = "x"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
PYTEST_SECTION = "pyproject.toml#tool.pytest.ini_options"


@pytest.mark.parametrize(
    "files, entry, value",
    [
        ({"pyproject.toml": PYPROJECT}, PYTEST_SECTION, {"testpaths": ["tests"]}),
        ({"pyproject.toml": PYPROJECT}, "pyproject.toml#tool.coverage", None),
        ({}, PYTEST_SECTION, None),
        (
            {"setup.cfg": "[metadata]\nname = x\n[tool:pytest]\naddopts = -q\n"},
            "setup.cfg#tool:pytest",
            {"addopts": "-q"},
        ),
        ({"tox.ini": "[tox]\nenvlist = py3\n"}, "tox.ini#pytest", None),
        ({"package.json": '{"scripts": {"test": "vitest", "build": "tsc"}}'}, "package.json#scripts.test", "vitest"),
        ({"a.toml": '[tool."x.y"]\nz = 1\n'}, 'a.toml#tool."x.y".z', 1),
        (
            {"package.json": "{not json"},
            "package.json#scripts.test",
            {"<unreadable>": hashlib.sha256(b"{not json").hexdigest()},
        ),
    ],
)
def test_section_value_reads_the_parsed_section(files: dict[str, str], entry: str, value: object) -> None:
    assert section_value(Snapshot.of_files(files), entry) == value


def test_section_digest_ignores_layout_and_the_rest_of_the_file() -> None:
    spaced = '# tests\n[tool.pytest.ini_options]\ntestpaths = [ "tests" ]  # here\n\n[project]\nname = "y"\n'
    digests = {
        section_digest(Snapshot.of_files({"pyproject.toml": text}), PYTEST_SECTION) for text in (PYPROJECT, spaced)
    }
    assert len(digests) == 1


def rule_of(base: dict[str, str], head: dict[str, str], rule: SealRule) -> RuleDigest:
    return rule_digest(Snapshot.of_files(base), Snapshot.of_files(head), rule)


def test_a_section_rule_sees_its_section_and_nothing_else_of_the_file() -> None:
    rule = SealRule("pytest settings", (PYTEST_SECTION,), "fail")
    bumped = PYPROJECT.replace('"0.1.0"', '"0.2.0"')
    addopts = PYPROJECT + 'addopts = "-x"\n'
    quiet = rule_of({"pyproject.toml": PYPROJECT}, {"pyproject.toml": bumped}, rule)
    loud = rule_of({"pyproject.toml": PYPROJECT}, {"pyproject.toml": addopts}, rule)
    assert (quiet.changed, quiet.base == quiet.head, quiet.violated) == ((), True, False)
    assert (loud.changed, loud.base == loud.head, loud.violated) == ((PYTEST_SECTION,), False, True)


def test_allow_new_counts_edits_and_deletions_but_not_new_files() -> None:
    rule = SealRule("existing tests", ("tests/**",), "fail", allow_new=True)
    base = {"tests/test_a.py": "a", "tests/test_b.py": "b"}
    added = rule_of(base, {**base, "tests/test_c.py": "c"}, rule)
    edited = rule_of(base, {"tests/test_a.py": "A", "tests/test_c.py": "c"}, rule)
    assert (added.changed, added.added, added.intact, added.base == added.head) == (
        (),
        ("tests/test_c.py",),
        True,
        True,
    )
    assert (edited.changed, edited.added) == (("tests/test_a.py", "tests/test_b.py"), ("tests/test_c.py",))
    strict = rule_of(base, {**base, "tests/test_c.py": "c"}, SealRule("all tests", ("tests/**",), "fail"))
    assert (strict.changed, strict.added) == (("tests/test_c.py",), ())


def test_digests_carry_each_rule_and_name_forbidden_changes() -> None:
    rules = (
        SealRule("default", ("tests/**", PYTEST_SECTION)),
        SealRule("fixtures", ("data/**",), "fail"),
        SealRule("docs", ("docs/**",), "allow"),
    )
    base = Snapshot.of_files({"tests/test_a.py": "a", "data/x.json": "1", "docs/a.md": "a"}, sha="b" * 40)
    head = Snapshot.of_files({"tests/test_a.py": "a", "data/x.json": "2", "docs/a.md": "b"}, sha="h" * 40)
    digests = compute_digests(base, head, ("tests/**", "data/**"), rules)
    assert digests.forbidden() == ["data/x.json (rule 'fixtures')"]
    assert digests.sealed_changed == ("data/x.json",)
    shown = digests.to_json()["rules"]
    assert [(r["name"], r["on_change"], r["intact"], r["changed"]) for r in shown] == [
        ("default", "review", True, []),
        ("fixtures", "fail", False, ["data/x.json"]),
        ("docs", "allow", False, ["docs/a.md"]),
    ]
    assert sorted(shown[0]) == ["added", "allow_new", "base", "changed", "head", "intact", "name", "on_change"]
    assert shown[0]["base"] == shown[0]["head"]


def test_digests_json_keeps_its_old_keys() -> None:
    digests = compute_digests(Snapshot.of_files({"tests/a.py": "a"}), Snapshot.of_files({"tests/a.py": "b"}), GLOBS)
    assert list(digests.to_json()) == ["base", "head", "sealed", "manifest", "judge_changed", "rules"]
    assert digests.to_json()["rules"] == []


# A property over generated pyproject.toml files: tables of plain values
# written as JSON, whose strings are TOML basic strings once control
# characters and U+007F (raw in JSON, forbidden in TOML) are left out.
KEYS = st.from_regex(r"[a-z][a-z_]{0,5}", fullmatch=True)
TEXT = st.text(st.characters(min_codepoint=0x20, exclude_characters="\x7f", exclude_categories=("Cs",)), max_size=6)
VALUES = st.one_of(st.integers(-5, 5), st.booleans(), TEXT, st.lists(TEXT, max_size=3))
TABLES = st.dictionaries(KEYS, VALUES, max_size=4)


def _table(table: dict[str, object]) -> str:
    return "".join(f"{key} = {json.dumps(value, ensure_ascii=False)}\n" for key, value in table.items())


def pyproject(section: dict[str, object], other: dict[str, object], version: str, first: bool) -> str:
    pytest_part = f"[tool.pytest.ini_options]\n{_table(section)}\n"
    other_part = f"[tool.coverage.run]\n{_table(other)}\n"
    project = f'[project]\nname = "x"\nversion = {json.dumps(version, ensure_ascii=False)}\n\n'
    return project + (pytest_part + other_part if first else other_part + pytest_part)


@settings(max_examples=80, deadline=None)
@given(
    section=TABLES,
    section_after=TABLES,
    other=TABLES,
    other_after=TABLES,
    version=TEXT,
    version_after=TEXT,
    first=st.booleans(),
    first_after=st.booleans(),
)
def test_a_change_outside_the_section_never_changes_its_digest(
    section: dict[str, object],
    section_after: dict[str, object],
    other: dict[str, object],
    other_after: dict[str, object],
    version: str,
    version_after: str,
    first: bool,
    first_after: bool,
) -> None:
    """Whatever else in the file changes (other tables, the version, the
    order of the tables), the section's digest moves exactly when the
    section's parsed content does."""

    def digest(text: str) -> str:
        return section_digest(Snapshot.of_files({"pyproject.toml": text}), PYTEST_SECTION)

    before = digest(pyproject(section, other, version, first))
    assert digest(pyproject(section, other_after, version_after, first_after)) == before
    assert (digest(pyproject(section_after, other, version, first)) == before) == (section_after == section)
