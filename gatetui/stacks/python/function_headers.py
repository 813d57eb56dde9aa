"""Which changed lines are a function's header, and where its body is.

A function's decorators, its `def` line and its parameters' defaults run
once, when the module defining it is imported, never inside a test; but
the tests that see a mistake in them are the ones that call the function.
So for a header line that ran only at import, `bites` tries its mutants
over the tests that ran the function's body (gate/judging/mutants.py).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from gatetui.pyparse import parse_python

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def headers(text: str, lines: frozenset[int]) -> Mapping[int, tuple[int, int]]:
    """Each of `lines` that lies in a function's header (from its first
    decorator to the line before its body; a one-line `def` is its own
    body's line too), with the first and last lines of that function's
    body; the innermost function where they nest. Text that does not parse
    has none."""
    tree = parse_python(text) if lines else None
    if tree is None:
        return {}
    wanted = sorted(lines)
    found: dict[int, tuple[int, tuple[int, int]]] = {}  # line -> (the function's depth, its body)
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:  # its own stack: a deeply nested module cannot exhaust the recursion limit
        node, depth = stack.pop()
        if isinstance(node, FUNCTIONS) and node.body:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            last = max(node.lineno, node.body[0].lineno - 1)
            body = (node.body[0].lineno, node.end_lineno or node.body[-1].lineno)
            for line in (n for n in wanted if first <= n <= last):
                if line not in found or found[line][0] < depth:
                    found[line] = (depth, body)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return {line: body for line, (_, body) in sorted(found.items())}
