"""Split code stays split: no part of gatetui/supervise nor gatetui/backends
grows back into a god class (a class over 150 lines, a file over 400)."""

from __future__ import annotations

import ast
from pathlib import Path

import gatetui.backends
import gatetui.supervise

SUPERVISE = Path(gatetui.supervise.__file__).parent
BACKENDS = Path(gatetui.backends.__file__).parent


def shapes(folder: Path) -> dict[str, tuple[int, int]]:
    """Per module: its lines, and the lines of its longest class."""
    found = {}
    for path in sorted(folder.glob("*.py")):
        text = path.read_text()
        classes = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ClassDef)]
        longest = max((c.end_lineno or c.lineno) - c.lineno + 1 for c in classes) if classes else 0
        found[path.name] = (len(text.splitlines()), longest)
    return found


def test_no_supervise_file_over_400_lines_nor_class_over_150() -> None:
    found = shapes(SUPERVISE)
    assert {"supervisor.py", "queue.py", "gating.py", "submits.py", "reviews.py", "watching.py"} <= set(found)
    assert {name: shape for name, shape in found.items() if shape[0] > 400 or shape[1] > 150} == {}


def test_no_backends_file_over_400_lines_nor_class_over_150() -> None:
    found = shapes(BACKENDS)
    assert {"local.py", "local_workspace.py", "local_layout.py", "local_files.py", "runtime.py",
            "runtime_workspace.py", "runtime_forks.py", "runtime_pack.py", "closing.py"} <= set(found)
    assert {name: shape for name, shape in found.items() if shape[0] > 400 or shape[1] > 150} == {}


def test_the_shapes_are_measured_in_lines(tmp_path: Path) -> None:
    """The measure itself: a file's lines, and its longest class from its
    `class` line to its last (a nested class is inside its own)."""
    (tmp_path / "two.py").write_text(
        "class Short:\n    pass\n\n\nclass Long:\n    class Inner:\n        pass\n\n    x = 1\n")
    (tmp_path / "none.py").write_text("X = 1\n")
    assert shapes(tmp_path) == {"none.py": (1, 0), "two.py": (9, 5)}
