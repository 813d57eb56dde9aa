"""Written into one mutant run's gate folder by the gate (bites), under a
name drawn per mutant, and loaded with `-p` before any conftest imports the
library: the mutant of one of head's modules, run from memory.

The tree keeps head's file as it is (its bytes, size and times), so what a
test reads of it (the file, `inspect.getsource`, `linecache`, a hash of the
package) is head's text, while the code every test runs is the mutant's.
Python's source loader compiles the mutant instead of the file's bytes,
under the file's own name (tracebacks and line numbers are the file's),
wherever that file is loaded from source: an import, a reload, a loader a
test builds itself (`spec_from_file_location`), pytest's assertion
rewriter where it takes the file in. The bytecode folder of a run is
read-only, so no run writes a .pyc of it either way.

The gate appends `_install(PATH, SOURCE)`: the file's path in the tree
(the run starts at the tree's top) and the mutant, both packed so that no
text of the module stands in this file.
"""

from __future__ import annotations

import ast
import base64
import importlib.machinery
import os
import sys
import zlib
from typing import Any

_LATE: list[str] = []  # the mutated file, when a module was loaded from it before this plugin


def pytest_configure(config: Any) -> None:
    """A module loaded from the file before this plugin (pytest imports
    pluggy itself) runs head's code, not the mutant: the run stops as a
    usage error, and the gate writes the mutant over the tree instead."""
    if _LATE:
        import pytest

        raise pytest.UsageError(f"{_LATE[0]}: imported before the mutant could be loaded in its place")


def _install(path: str, source: str) -> None:
    wanted = os.path.realpath(os.path.join(os.getcwd(), _unpack(path).decode("utf-8")))
    mutant = _unpack(source)
    if any(_loaded_from(module, wanted) for module in list(sys.modules.values())):
        _LATE.append(wanted)
        return
    name = os.path.basename(wanted)
    owner = next(c for c in importlib.machinery.SourceFileLoader.__mro__ if "get_code" in c.__dict__)
    original = owner.__dict__["get_code"]

    def get_code(self: Any, fullname: str) -> Any:
        try:
            path = self.get_filename(fullname)
        except Exception:  # noqa: BLE001 - a loader without a file: as it was
            return original(self, fullname)
        if isinstance(path, str) and os.path.basename(path) == name and os.path.realpath(path) == wanted:
            return self.source_to_code(mutant, path)
        return original(self, fullname)

    _dressed(get_code, original)
    setattr(owner, "get_code", get_code)  # noqa: B010 - mypy sees the loader class as closed
    _rewritten_too(wanted, mutant)


def _rewritten_too(wanted: str, mutant: bytes) -> None:
    """pytest's assertion rewriter loads the modules it rewrites itself
    (test files, conftest.py, what python_files or register_assert_rewrite
    takes in): where that is the mutated file, it rewrites the mutant."""
    try:
        from _pytest.assertion import rewrite
    except ImportError:
        return
    original = rewrite._rewrite_test

    def _rewrite_test(fn: Any, config: Any) -> Any:
        if os.path.realpath(fn) != wanted:
            return original(fn, config)
        stat, name = os.stat(fn), str(fn)
        tree = ast.parse(mutant, filename=name)
        rewrite.rewrite_asserts(tree, mutant, name, config)
        return stat, compile(tree, name, "exec", dont_inherit=True)

    _dressed(_rewrite_test, original)
    setattr(rewrite, "_rewrite_test", _rewrite_test)  # noqa: B010 - a module mypy sees as closed


def _dressed(function: Any, original: Any) -> None:
    for attribute in ("__name__", "__qualname__", "__doc__", "__module__"):
        setattr(function, attribute, getattr(original, attribute))


def _loaded_from(module: Any, wanted: str) -> bool:
    where = getattr(module, "__file__", None)
    return isinstance(where, str) and os.path.realpath(where) == wanted


def _unpack(packed: str) -> bytes:
    return zlib.decompress(base64.b85decode(packed))
