"""Go test definitions, the markers that switch them off, and test-run hooks.

Read with tree-sitter's Go grammar (a maintained parser, so a `t.Skip` in a
string, a comment or a raw string literal is never taken for a call):

- a definition is a top-level `func TestX(t *testing.T)`, `FuzzX` or
  `ExampleX` (what `go test` runs); the name is the function's;
- a marker is a call of `.Skip`, `.Skipf` or `.SkipNow` (on any testing
  value: t, b, f, or one passed along), or a build constraint (`//go:build`,
  `// +build`) before the package clause, which can leave the whole file
  out of the build, as good as skipping every test in it;
- a hook is a `TestMain` or an `init` in a test file: code that runs before
  any test and can end the process with a green exit (`os.Exit(0)`).

Any input, however broken, yields an answer and never an exception:
tree-sitter parses with error nodes where the code is mid-edit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import tree_sitter_go
from tree_sitter import Language, Node, Parser

from gatetui.stacks.testdefs import MarkerHit, TestDef

GO = Language(tree_sitter_go.language())
TEST_FUNC = re.compile(r"^(?:Test|Fuzz|Example)(?![a-z])")  # go test's rule: TestFoo, not Testfoo
SKIP_CALLS = frozenset({"Skip", "Skipf", "SkipNow"})
HOOK_FUNCS = frozenset({"TestMain", "init"})
CONSTRAINT = re.compile(r"^//(?:go:build\s|\s*\+build\s)")


def _root(text: str) -> Node:
    return Parser(GO).parse(text.encode("utf-8", "surrogatepass")).root_node


def _functions(root: Node) -> Iterator[Node]:
    for child in root.children:
        if child.type == "function_declaration":
            yield child


def _name(node: Node) -> str:
    name = node.child_by_field_name("name")
    return name.text.decode("utf-8", "replace") if name is not None and name.text is not None else ""


def go_test_defs(path: str, text: str) -> list[TestDef]:
    """The tests `go test` would run from this file, by function name."""
    return go_scan(path, text, False)[0]


def _markers(root: Node, lines: list[str]) -> list[MarkerHit]:
    hits = [(line, "skip") for line in _constraint_lines(root)]
    hits += [(node.start_point[0] + 1, "skip") for node in _calls(root) if _is_skip(node)]
    return [(line, kind, lines[line - 1].strip() if line <= len(lines) else "") for line, kind in sorted(set(hits))]


def _constraint_lines(root: Node) -> list[int]:
    """Build constraints: comments before the package clause."""
    found = []
    for child in root.children:
        if child.type == "package_clause":
            break
        if child.type == "comment" and CONSTRAINT.match((child.text or b"").decode("utf-8", "replace")):
            found.append(child.start_point[0] + 1)
    return found


def _calls(root: Node) -> Iterator[Node]:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "call_expression":
            yield node
        stack.extend(node.children)


def _is_skip(call: Node) -> bool:
    function = call.child_by_field_name("function")
    if function is None or function.type != "selector_expression":
        return False
    field = function.child_by_field_name("field")
    return field is not None and (field.text or b"").decode() in SKIP_CALLS


def go_scan(path: str, text: str, markers: bool) -> tuple[list[TestDef], list[MarkerHit]]:
    """Definitions and (when asked) markers of one version, parsed once."""
    root = _root(text)
    defs = [TestDef(path, name, f.start_point[0] + 1) for f in _functions(root) if _is_test(name := _name(f))]
    return defs, _markers(root, text.splitlines()) if markers else []


def go_hooks(text: str) -> dict[str, str]:
    """TestMain and init functions of a test file: name -> source text."""
    hooks: dict[str, str] = {}
    for function in _functions(_root(text)):
        name = _name(function)
        if name in HOOK_FUNCS:
            hooks[name] = hooks.get(name, "") + (function.text or b"").decode("utf-8", "replace")
    return hooks


def looks_like_go_test(path: str) -> bool:
    return path.endswith("_test.go")


def _is_test(name: str) -> bool:
    """What go test runs as a test: TestMain runs the tests, it is not one."""
    return bool(TEST_FUNC.match(name)) and name not in HOOK_FUNCS
