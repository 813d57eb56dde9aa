"""`if TYPE_CHECKING:` blocks: code for type checkers that never runs.

coverage.py leaves such blocks out the maintained way, with an exclusion
pattern (`exclude_also = ["if TYPE_CHECKING:"]`, which its own
documentation suggests); the gate gives its analysis of head's text one
(coverage_lines.py), so `covered` never asks a person about a line no run
can reach. The pattern is built per module, and only for the names that
really are False at run time: a name bound in that module by nothing but
an import of typing's TYPE_CHECKING or an assignment of the literal False
(hatch-vcs writes `TYPE_CHECKING = False` into its version files), or a
`typing` module bound by nothing but its import. A module that binds the
name otherwise (`TYPE_CHECKING = True`, a star import that may bring one
from elsewhere, `typing.TYPE_CHECKING = ...`) gets no pattern: its
guarded code could run, so every line of it is judged.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

FLAG = "TYPE_CHECKING"
TYPING = frozenset({"typing", "typing_extensions"})
FLAG_BINDING, MODULE_BINDING, OTHER = "flag", "module", "other"


@dataclass(frozen=True)
class Guards:
    pattern: str | None  # for coverage.py's exclusion; None: the module has no guard
    lines: frozenset[int]  # where its `if <guard>:` statements are, the only lines the pattern may match


def type_checking_guards(tree: ast.Module) -> Guards:
    """This module's guards, as an exclusion pattern and the lines it must match."""
    spellings = guard_spellings(tree)
    if not spellings:
        return Guards(None, frozenset())
    names = "|".join(re.escape(spelling) for spelling in sorted(spellings))
    lines = frozenset(
        node.lineno for node in ast.walk(tree) if isinstance(node, ast.If) and spelled(node.test) in spellings
    )
    return Guards(rf"^[ \t]*if[ \t]+(?:{names})[ \t]*:", lines)


def guard_spellings(tree: ast.Module) -> frozenset[str]:
    """`TYPE_CHECKING`, `t.TYPE_CHECKING`...: the guards that are False when the module runs."""
    kinds: dict[str, Counter[str]] = {}
    for name, kind in bindings(tree):
        kinds.setdefault(name, Counter())[kind] += 1
    if OTHER in kinds.get("*", {}):
        return frozenset()
    flags = {name for name, seen in kinds.items() if set(seen) == {FLAG_BINDING}}
    modules = {f"{name}.{FLAG}" for name, seen in kinds.items() if set(seen) == {MODULE_BINDING}}
    return frozenset(flags | modules)


def bindings(tree: ast.Module) -> Iterator[tuple[str, str]]:
    """Every name the module binds anywhere, with what it binds it to
    (`*` for a star import; a store into an attribute named TYPE_CHECKING
    binds `*` too: it may change any module's flag)."""
    false_targets: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and _is_false(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            false_targets |= {id(t) for t in targets if isinstance(t, ast.Name)}
        yield from _bound(node, false_targets)


def _bound(node: ast.AST, false_targets: set[int]) -> Iterator[tuple[str, str]]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            kind = MODULE_BINDING if alias.name in TYPING else OTHER
            yield alias.asname or alias.name.split(".")[0], kind
    elif isinstance(node, ast.ImportFrom):
        typing = node.module in TYPING and not node.level
        for alias in node.names:
            if not (typing and alias.name == "*"):  # typing's own names bind no other flag
                yield alias.asname or alias.name, FLAG_BINDING if typing and alias.name == FLAG else OTHER
    elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        yield node.id, FLAG_BINDING if id(node) in false_targets else OTHER
    elif isinstance(node, ast.Attribute) and node.attr == FLAG and not isinstance(node.ctx, ast.Load):
        yield "*", OTHER
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name, OTHER
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        yield from ((name, OTHER) for name in node.names)
    elif isinstance(node, (ast.arg, ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        name = node.arg if isinstance(node, ast.arg) else node.name
        if name:
            yield name, OTHER


def spelled(test: ast.expr) -> str:
    """`X` or `m.X` as written, else ""."""
    if isinstance(test, ast.Name):
        return test.id
    if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name):
        return f"{test.value.id}.{test.attr}"
    return ""


def _is_false(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Constant) and value.value is False
