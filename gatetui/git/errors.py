"""The one error the repository modules raise, and the text its messages use.

Everything that goes wrong while reading the user's repository (not a
repository, unknown ref, unsafe tree, missing object) is the user's to fix,
so it is reported as one line naming what is wrong and what to do.
"""

from __future__ import annotations

from gatetui.errors import BadInput


class RepoError(BadInput):
    """One-line, user-facing message naming what is wrong and what to do.

    A `BadInput` (itself an `Exception`), so the CLI prints the line and exits
    with the "bad input" code: not a repository, unknown ref, unsafe tree.
    """


def one_line(exc: BaseException) -> str:
    """An exception's text on one line (its type name when it has none)."""
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())


def missing(exc: KeyError) -> str:
    """The object id a KeyError from dulwich names, as text."""
    key = exc.args[0] if exc.args else ""
    if isinstance(key, bytes):
        return key.decode("ascii", "replace")
    return str(key)
