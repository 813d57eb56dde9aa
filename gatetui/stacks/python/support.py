"""The test code base's tests load that no test-module glob names.

pytest's default import mode puts the folder of a test module that is in no
package at the front of `sys.path`, so base's tests import their helpers
there by bare name (`from helpers import check`), and an `__init__.py`
added to that folder would be imported before any of them. Both are test
code: sealed with the tests, so that `old_tests` runs base's helpers and no
`__init__.py` head slipped in. A library module is imported through its
package and is never sealed here; the tree's root and `src` hold the
project itself and are left to the test-module globs.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import PurePosixPath

from gatetui.git.snapshot import Snapshot
from gatetui.globs import matches
from gatetui.pyparse import parse_python

# A change to a file this large is not a test helper's; parsing stops there.
_MAX_TEST_MODULES = 2000


def test_support(base: Snapshot, test_globs: Iterable[str]) -> tuple[str, ...]:
    """Paths to seal beside base's test modules: for each folder holding a
    test module and no `__init__.py` (outside the root and `src`), its
    `__init__.py` and the modules of that folder base's tests import by
    name, bare or through the root."""
    globs = tuple(test_globs)
    paths = set(base.paths)
    tests = [p for p in sorted(paths) if p.endswith(".py") and matches(p, globs)][:_MAX_TEST_MODULES]
    out: list[str] = []
    for path in tests:
        folder = str(PurePosixPath(path).parent)
        if folder in (".", "src") or f"{folder}/__init__.py" in paths:
            continue
        out.append(f"{folder}/__init__.py")
        for name in _absolute_imports(base.text(path) or ""):
            module = name.replace(".", "/")
            # beside the test (`helpers`), or through the root (`checks.helpers`, a namespace package)
            out += [
                c
                for c in (f"{folder}/{module.split('/')[0]}.py", f"{module}.py")
                if c in paths and c.startswith(folder + "/")
            ]
    return tuple(p for p in dict.fromkeys(out) if not matches(p, globs))


def _absolute_imports(source: str) -> list[str]:
    """The dotted names a module imports absolutely (`from a.b import c` gives `a.b`)."""
    tree = parse_python(source)
    if tree is None:
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names
