"""Written into a recording run's gate folder by the gate (bites, after a
mutant survived), under a name drawn per run, and loaded with `-p`: the
arguments the tests pass to one of head's functions, kept as literals.

A surviving mutant is either a test the change lacks or a mutant no input
can tell apart. The search that decides which (search_inputs.py) starts
from the values the tests themselves use: this records them, from head's
code as the tests ran it (no mutant here), for plain values only (numbers,
strings, bytes, None and small lists, tuples and dicts of them), each
written as its repr and kept only where `ast.literal_eval` gives it back.
They are written, with the name of the module the function was imported
as, to the file the gate names.

The gate appends `_install(PATH, NAME, OUT)`: the function's file in the
tree (the run starts at the tree's top), its name and where to write, packed.
"""

from __future__ import annotations

import ast
import base64
import json
import os
import sys
import threading
import zlib
from typing import Any

MAX_CALLS = 64  # distinct calls kept
MAX_REPR = 200  # characters of one argument's repr
MAX_ITEMS = 16  # items of a list, tuple or dict
SCALARS = (int, float, str, bytes, bool, type(None))

_WANTED: list[str] = []  # [real path, function name, where to write]
_CALLS: dict[str, dict[str, Any]] = {}
_CODES: dict[Any, bool] = {}


def _install(path: str, name: str, out: str) -> None:
    _WANTED[:] = [os.path.realpath(os.path.join(os.getcwd(), _unpack(path))), _unpack(name), _unpack(out)]
    sys.setprofile(_on_call)
    threading.setprofile(_on_call)


def _unpack(text: str) -> str:
    return zlib.decompress(base64.b85decode(text)).decode("utf-8")


def _is_target(code: Any) -> bool:
    known = _CODES.get(code)
    if known is None:
        known = _CODES[code] = (
            code.co_name == _WANTED[1]
            and code.co_qualname == _WANTED[1]
            and os.path.realpath(code.co_filename) == _WANTED[0]
        )
    return known


def _on_call(frame: Any, event: str, arg: Any) -> None:
    if event != "call" or len(_CALLS) >= MAX_CALLS or not _is_target(frame.f_code):
        return
    code = frame.f_code
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    values = [frame.f_locals.get(name) for name in names]
    texts = [_literal(value) for value in values]
    if any(text is None for text in texts):
        return
    call = {
        "args": texts[: code.co_argcount],
        "kwargs": dict(zip(names[code.co_argcount :], texts[code.co_argcount :])),
    }
    _CALLS.setdefault(json.dumps(call, sort_keys=True), call)


def _literal(value: Any) -> str | None:
    """The value's repr when it is plain and reads back as itself."""
    if not _plain(value, 0):
        return None
    try:
        text = repr(value)
        same = len(text) <= MAX_REPR and ast.literal_eval(text) == value
    except Exception:  # noqa: BLE001 - a repr that does not read back is not kept
        return None
    return text if same else None


def _plain(value: Any, depth: int) -> bool:
    kind = type(value)
    if kind in SCALARS:
        return True
    if depth >= 2 or kind not in (list, tuple, dict) or len(value) > MAX_ITEMS:
        return False
    items = [*value.keys(), *value.values()] if kind is dict else list(value)
    return all(_plain(item, depth + 1) for item in items)


def pytest_sessionfinish(session: Any) -> None:
    sys.setprofile(None)
    threading.setprofile(None)
    if not _WANTED:
        return
    module = next((name for name, mod in sorted(sys.modules.items()) if _file_of(mod) == _WANTED[0]), "")
    with open(_WANTED[2], "w", encoding="utf-8") as out:
        json.dump({"module": module, "calls": list(_CALLS.values())}, out)


def _file_of(module: Any) -> str:
    path = getattr(module, "__file__", None)
    return os.path.realpath(path) if isinstance(path, str) else ""
