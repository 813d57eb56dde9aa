"""Changes the gate refuses to judge before anything runs: odd file names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatetui.backends.local import LocalBackend
from gatetui.gate.diff.refusals import odd_name, refusal
from gatetui.git.snapshot import Snapshot
from gatetui.inert import inert_line
from tests.support.hostile_text import unsafe_in
from tests.support.phases import BASE, BROKEN, gate, statuses
from tests.support.repos import MakeRepo

PYC = r"^(?:.*/)?(?!__pycache__/)[^/]+/[^/]+\.py[co]$|^[^/]+\.py[co]$"


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("tests/test_fix\n.py", "tests/test_fix\\n.py"),  # the gate writes a newline as \\n: its detail stays one line
        (os.fsdecode(b"tests/test_\xff.py"), "tests/test_\\udcff.py"),  # fsdecode's surrogate for the byte
        ("tests/\u202eyp.tset_py", "tests/\\u202eyp.tset_py"),  # a right-to-left override
        ("tests/test_a\u2028.py", "tests/test_a\\u2028.py"),  # a line separator
        ("tests/te\u200bst_a.py", "tests/te\\u200bst_a.py"),  # a zero-width space
    ],
)
def test_a_name_added_with_an_odd_character_is_refused_shown_escaped(name: str, shown: str) -> None:
    """The detail names it as it is, on one line; shown, it is escaped once."""
    said = refusal(Snapshot.of_files({"a.py": ""}), Snapshot.of_files({"a.py": "", name: "x = 1\n"}), PYC)
    words = "head adds a file whose name the gate cannot judge (not UTF-8, or a control or format character in it)"
    assert said == f"{words}: {name.replace(chr(10), chr(92) + 'n')}; rename it"
    assert inert_line(said) == f"{words}: {shown}; rename it"


def test_ordinary_names_in_any_script_pass_and_base_names_are_base_business() -> None:
    odd = "tests/old\n.py"
    base = Snapshot.of_files({odd: "x = 1\n", "a.py": ""})
    head = Snapshot.of_files({odd: "x = 1\n", "a.py": "", "docs/café.md": "", "tests/test_数.py": ""})
    assert refusal(base, head, PYC) == ""


def test_sourceless_bytecode_is_refused_after_the_names() -> None:
    head = Snapshot.of_files({"pkg/fast.pyc": "", "pkg/__pycache__/a.cpython-311.pyc": ""})
    assert refusal(Snapshot.of_files({}), head, PYC) == (
        "head adds code with no source to read (the gate judges only what it can read): pkg/fast.pyc"
    )


@given(st.text(st.characters(codec=None, exclude_categories=()), min_size=1, max_size=60))
def test_a_refused_name_shown_holds_no_odd_character(name: str) -> None:
    said = refusal(Snapshot.of_files({}), Snapshot.of_files({f"tests/{name}.py": ""}), PYC)
    assert bool(said) == odd_name(name) and "\n" not in said
    assert unsafe_in(inert_line(said), multiline=False) == []


# A test module whose name holds a newline: no glob sees it, so it was neither
# sealed nor removed for old tests; at import it puts a right `mul` in place of
# head's broken one, so every run, base's tests included, passed.
PATCHES_AT_IMPORT = "import mathlib.core\n\nmathlib.core.mul = lambda a, b: a * b\n"


@pytest.mark.sandbox
@pytest.mark.install
def test_a_test_file_named_with_a_newline_fails_before_anything_runs(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo(BASE, {"mathlib/core.py": BROKEN, "tests/test_fix\n.py": PATCHES_AT_IMPORT})
    done = gate(repo, tmp_path / "work", LocalBackend(work_root=tmp_path / "w").fork_mode)
    install = next(r for r in done.results if r.id.value == "install")
    assert (done.verdict.value, statuses(done)["runs"], install.detail) == (
        "fail",
        "skipped",
        "head adds a file whose name the gate cannot judge (not UTF-8, or a control or format character in "
        "it): tests/test_fix\\n.py; rename it",
    )
