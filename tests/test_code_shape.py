"""The supervisor stays split by job and the gate by phase: no part of
gatetui/supervise or gatetui/gate grows back into a god class (a class over
150 lines, a file over 400)."""

from __future__ import annotations

import ast
from pathlib import Path

import gatetui.gate
import gatetui.supervise

FOLDER = Path(gatetui.supervise.__file__).parent
GATE = Path(gatetui.gate.__file__).parent


def shapes(folder: Path = FOLDER, pattern: str = "*.py") -> dict[str, tuple[int, int]]:
    """Per module: its lines, and the lines of its longest class."""
    found = {}
    for path in sorted(folder.glob(pattern)):
        text = path.read_text()
        classes = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ClassDef)]
        longest = max((c.end_lineno or c.lineno) - c.lineno + 1 for c in classes) if classes else 0
        found[path.relative_to(folder).as_posix()] = (len(text.splitlines()), longest)
    return found


def test_no_supervise_file_over_400_lines_nor_class_over_150() -> None:
    found = shapes()
    assert {"supervisor.py", "queue.py", "gating.py", "submits.py", "reviews.py", "watching.py"} <= set(found)
    assert {name: shape for name, shape in found.items() if shape[0] > 400 or shape[1] > 150} == {}


def test_no_gate_file_over_400_lines_nor_class_over_150() -> None:
    found = shapes(GATE, "**/*.py")
    assert {"runner.py", "phases/build.py", "phases/suite.py", "phases/base_own.py", "phases/ledger.py",
            "checks/registry.py"} <= set(found)
    assert {name: shape for name, shape in found.items() if shape[0] > 400 or shape[1] > 150} == {}
