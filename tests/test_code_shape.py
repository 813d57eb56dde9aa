"""The supervisor stays split by job: no part of gatetui/supervise grows
back into a god class (a class over 150 lines, a file over 400)."""

from __future__ import annotations

import ast
from pathlib import Path

import gatetui.supervise

FOLDER = Path(gatetui.supervise.__file__).parent


def shapes() -> dict[str, tuple[int, int]]:
    """Per module: its lines, and the lines of its longest class."""
    found = {}
    for path in sorted(FOLDER.glob("*.py")):
        text = path.read_text()
        classes = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ClassDef)]
        longest = max((c.end_lineno or c.lineno) - c.lineno + 1 for c in classes) if classes else 0
        found[path.name] = (len(text.splitlines()), longest)
    return found


def test_no_supervise_file_over_400_lines_nor_class_over_150() -> None:
    found = shapes()
    assert {"supervisor.py", "queue.py", "gating.py", "submits.py", "reviews.py", "watching.py"} <= set(found)
    assert {name: shape for name, shape in found.items() if shape[0] > 400 or shape[1] > 150} == {}
