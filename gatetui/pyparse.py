"""Parsing Python source the agent wrote, safely from any thread.

CPython 3.11 keeps the AST builder's recursion counter in state shared by
every thread: when a garbage collection during one thread's parse runs a
finalizer and the interpreter switches to another thread parsing too, the
counter is thrown off and `ast.parse` raises "SystemError: AST constructor
recursion depth mismatch" on valid code. The gate parses in worker threads
(plans for several branches at once), so every parse goes through one lock.

Warnings are silenced because the file is the agent's, not ours: an invalid
escape warns, and under `-W error` the warning would become a SyntaxError
that hides every test in an otherwise fine file. (`catch_warnings` changes
process-wide state too: the lock covers it.)
"""

from __future__ import annotations

import ast
import threading
import warnings

_LOCK = threading.Lock()


def parse_python(source: str) -> ast.Module | None:
    """The parsed module, or None when the text is not valid Python."""
    with _LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
