"""Where in a module a mutant can change behaviour.

A mutant that cannot change what the code does is noise a reviewer must
dismiss: it survives every test. So the walk leaves out what only speaks or
describes (a docstring, a log or print call, an import, `pass`, `...`), type
hints (annotations, `if TYPE_CHECKING:`), what tests never run
(`if __name__ == "__main__":`), a module's metadata (`__version__ = "1.2"`,
`__author__`, `__all__`: read by tools and people, never a behaviour a test
should pin), and what ast cannot place exactly (the
insides of f-strings, whose positions CPython 3.11 does not keep reliably;
match patterns, which are not expressions). Everything else on a changed
line gives its mutants (see mutant_ops). The walk keeps its own stack, so a
deeply nested module cannot exhaust Python's recursion limit.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator, Sequence

from gatetui.stacks.python.mutant_ops import Edit, expression_edits, statement_edits

QUIET = (ast.Import, ast.ImportFrom, ast.Pass, ast.Global, ast.Nonlocal)
LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"})
TYPE_HINTS = frozenset({"annotation", "returns"})  # the fields of def, arg and AnnAssign that hold type hints
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
LOOPS = (ast.For, ast.AsyncFor, ast.While)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)  # inside one, code is no module's own
# Module-level names that describe the module (PEP 8's "module level dunder
# names", and the ones packaging tools and version files write).
METADATA = frozenset(
    {
        "__all__",
        "__version__",
        "__version_info__",
        "__version_tuple__",
        "__author__",
        "__author_email__",
        "__email__",
        "__maintainer__",
        "__maintainer_email__",
        "__license__",
        "__copyright__",
        "__credits__",
        "__status__",
        "__date__",
        "__title__",
        "__summary__",
        "__description__",
        "__uri__",
        "__url__",
        "__docformat__",
        "__build__",
        "__release__",
        "__revision__",
        "__contact__",
        "__homepage__",
    }
)


def edits(tree: ast.Module, lines: frozenset[int]) -> Iterator[Edit]:
    """Every edit of the module whose node starts on one of `lines`."""
    wanted = sorted(lines)
    stack: list[tuple[ast.AST, bool, bool]] = [(tree, False, True)]  # (node, idle, at module level)
    while stack:
        node, idle, top = stack.pop()
        if not touches(node, wanted) or quiet(node) or top and metadata(node) or isinstance(node, ast.JoinedStr):
            continue
        found = (
            statement_edits(node, idle)
            if isinstance(node, ast.stmt)
            else expression_edits(node)
            if isinstance(node, ast.expr)
            else iter(())
        )
        yield from (edit for edit in found if edit.line in lines)
        inner = top and not isinstance(node, SCOPES)
        stack.extend((child, child_idle, inner) for child, child_idle in reversed(list(children(node))))


def children(node: ast.AST) -> Iterator[tuple[ast.AST, bool]]:
    """The child nodes worth walking, each with whether it is idle where it
    stands (see statement_edits)."""
    for name, value in ast.iter_fields(node):
        if name in TYPE_HINTS or (isinstance(node, ast.match_case) and name == "pattern"):
            continue
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            if isinstance(item, ast.AST):
                ends_body = name == "body" and i == len(items) - 1
                yield item, ends_body and idle_at_end(node, item)


def idle_at_end(block: ast.AST, stmt: ast.AST) -> bool:
    """A statement that, ending `block`'s body, does what the end does anyway."""
    if isinstance(block, FUNCTIONS):
        return isinstance(stmt, ast.Return) and stmt.value is None
    return isinstance(block, LOOPS) and isinstance(stmt, ast.Continue)


def touches(node: ast.AST, wanted: Sequence[int]) -> bool:
    """Whether any wanted line falls in the node's lines (a node without
    positions, such as an operator or `arguments`, is walked through)."""
    first = getattr(node, "lineno", None)
    if not isinstance(first, int):
        return True
    last = getattr(node, "end_lineno", None) or first
    at = bisect.bisect_left(wanted, first)
    return at < len(wanted) and wanted[at] <= last


def quiet(node: ast.AST) -> bool:
    """A statement no mutant inside can make behave otherwise under tests."""
    if isinstance(node, QUIET):
        return True
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant) or speaks(node.value)
    if isinstance(node, ast.AnnAssign):
        return node.value is None
    if isinstance(node, ast.Assign):  # `__all__` names the public interface: it is read by tools and `import *`
        return [name_of(t) for t in node.targets] == ["__all__"]
    return isinstance(node, ast.If) and for_tools(node.test)


def metadata(node: ast.AST) -> bool:
    """An assignment of module metadata alone (`__version__ = "1.2"`,
    `__author__ = __maintainer__ = "..."`); at module level only, so a
    class's `__slots__` or `__hash__ = None` keeps its mutants."""
    targets = (
        node.targets
        if isinstance(node, ast.Assign)
        else [node.target]
        if isinstance(node, ast.AnnAssign) and node.value is not None
        else []
    )
    return bool(targets) and all(isinstance(t, ast.Name) and t.id in METADATA for t in targets)


def speaks(node: ast.expr) -> bool:
    """A call that only reports: print, a logger's methods, writes to stdout/stderr."""
    if isinstance(node, ast.Await):
        node = node.value
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id == "print"
    if not isinstance(func, ast.Attribute):
        return False
    owner = name_of(func.value)
    if func.attr in LOG_METHODS:
        return "log" in owner.lower()
    return func.attr in ("write", "flush") and owner in ("stdout", "stderr")


def for_tools(test: ast.expr) -> bool:
    """`if TYPE_CHECKING:` (type checkers only) and `if __name__ == "__main__":`
    (a script's entry, which tests import around)."""
    if name_of(test) == "TYPE_CHECKING":
        return True
    return (
        isinstance(test, ast.Compare)
        and name_of(test.left) == "__name__"
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def name_of(node: ast.expr) -> str:
    """The last name of a name or an attribute chain (`log` in `self.log`), else ""."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
