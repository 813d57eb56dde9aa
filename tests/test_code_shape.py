"""No god classes, no long files: nothing in the package grows back into a
class over 250 lines or a file over 400. The class limit is loose on purpose:
a class split only to be shorter forwards, and forwarding costs more than
length."""

from __future__ import annotations

import ast
from pathlib import Path

import gatetui

ROOT = Path(gatetui.__file__).parent
MAX_FILE, MAX_CLASS = 400, 250


def shapes(folder: Path = ROOT) -> dict[str, tuple[int, int]]:
    """Per module under `folder`, relative to it: its lines, and its longest class's."""
    found = {}
    for path in sorted(folder.rglob("*.py")):
        text = path.read_text()
        classes = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ClassDef)]
        longest = max((c.end_lineno or c.lineno) - c.lineno + 1 for c in classes) if classes else 0
        found[path.relative_to(folder).as_posix()] = (len(text.splitlines()), longest)
    return found


def test_the_walk_sees_the_whole_package() -> None:
    found = shapes()
    assert {
        "supervise/supervisor.py",
        "gate/runner.py",
        "git/repo.py",
        "stacks/go/report.py",
        "tui/screens/main.py",
        "backends/local_workspace.py",
        "backends/runtime_forks.py",
        "gate/phases/build.py",
        "gate/phases/suite.py",
        "gate/checks/registry.py",
    } <= set(found)


def test_no_file_over_400_lines_nor_class_over_250() -> None:
    assert {name: shape for name, shape in shapes().items() if shape[0] > MAX_FILE or shape[1] > MAX_CLASS} == {}


def test_the_shapes_are_measured_in_lines(tmp_path: Path) -> None:
    """The measure itself: a file's lines, and its longest class from its
    `class` line to its last (a nested class is inside its own)."""
    (tmp_path / "two.py").write_text(
        "class Short:\n    pass\n\n\nclass Long:\n    class Inner:\n        pass\n\n    x = 1\n"
    )
    (tmp_path / "none.py").write_text("X = 1\n")
    assert shapes(tmp_path) == {"none.py": (1, 0), "two.py": (9, 5)}
