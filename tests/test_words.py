"""The repository's words name what a reader can find in it.

A reader of the code, the tests or the docs has the repository and
nothing else: "issue 35" points into a tracker they cannot open, and "the
article" into a text they were never given. Each says what it means
instead (the behaviour protected, the figure's target)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TREES = ("gatetui", "tests", "bench", "docs", "sample_repos")
FILES = ("README.md", "CHANGELOG.md", "Makefile", "pyproject.toml")
TEXT = {".py", ".md", ".toml", ".txt", ".tcss", ".cfg", ".ini", ".yml", ".yaml", ".js", ".go", ".json"}
UNFOUND = re.compile(r"\bissues? #?\d+\b|\bthe article\b", re.IGNORECASE)


def texts() -> list[Path]:
    found = [ROOT / name for name in FILES]
    for tree in TREES:
        found += [
            p for p in (ROOT / tree).rglob("*") if p.is_file() and p.suffix in TEXT and "__pycache__" not in p.parts
        ]
    return sorted(p for p in found if p != Path(__file__).resolve())


@pytest.mark.parametrize("tree", TREES)
def test_each_tree_is_read(tree: str) -> None:
    assert any(p.is_relative_to(ROOT / tree) for p in texts())


def test_no_word_points_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}"
        for path in texts()
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if UNFOUND.search(line)
    ]
    assert found == []
