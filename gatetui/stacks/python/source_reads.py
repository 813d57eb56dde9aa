"""Test code that reads the library's code instead of running it.

`bites` asks whether the tests would notice a small bug in the changed
lines, by running them over mutants. A test that pins what the code looks
like (the module file's hash or size, `inspect.getsource`'s text, the lines
`linecache` holds, the function's bytecode, a hash over the package's
files) fails under every mutant without checking any behaviour, and every
mutant "dies". The python stack runs mutants from memory, so the file a
test reads is head's (mutant_import.py); the bytecode a test reads is the
mutant's own, though, and no run can hide that. So the added lines of test
code are read for it too, and each is shown to a person (old_tests fails,
the verdict is review), as the runner-aware rules are (hooks.py).

What is named, read with `ast` in the test files head adds or changes (and
the helpers beside them): `inspect`'s source functions (`getsource`,
`getsourcelines`, `getsourcefile`, `getfile`, ...), `linecache`, `dis`,
`__code__` and `co_code`; a module's `__file__` used as a file (opened,
hashed, stat'ed; a `find_spec(...).origin` likewise); a library module's
path named outright (`"pkg/core.py"`); and, in a function that finds the
package (`mod.__file__`'s folder, `mod.__path__`, `importlib.resources`,
the package's folder by name), a library module's file name or a pattern
of python files (`"core.py"`, `"*.py"`, `".py"`). What is not: `__file__`
of the test itself, a module's folder found to read data beside it
(`Path(mod.__file__).parent / "data.json"`), a name the project itself
defines (its own `getsource`), a file of the same name written elsewhere.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import PurePosixPath

from gatetui.git.snapshot import Snapshot
from gatetui.pyparse import parse_python
from gatetui.stacks.base import Finding
from gatetui.stacks.lines import added_lines
from gatetui.stacks.python.coverage_lines import code_file
from gatetui.stacks.python.project_code import shipped_code

WHAT = "test code reads library source or bytecode"
SOURCE_FUNCTIONS = frozenset(
    {"getsource", "getsourcelines", "getsourcefile", "getfile", "findsource", "getabsfile", "getcomments"}
)
READING_MODULES = ("linecache", "dis")  # any use of them reads source or bytecode
CODE_ATTRIBUTES = frozenset({"__code__", "co_code", "func_code"})
LOCATING_ATTRIBUTES = frozenset({"__file__", "__path__", "__spec__"})
LOCATING_CALLS = ("importlib.resources.", "importlib.util.find_spec", "pkgutil.get_data")
PATHS = frozenset({"Path", "PurePath", "PosixPath", "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"})
SAME_FILE = frozenset({"os.path.abspath", "os.path.realpath", "os.path.normpath", "resolve", "absolute"})
PATH_PARTS = frozenset({"parent", "parents", "parts", "name", "suffix", "suffixes", "stem", "anchor", "drive"})
TEST_FOLDERS = frozenset({"tests", "test", "testing"})
NOT_LIBRARY = frozenset({"setup.py", "conftest.py", "noxfile.py", "fabfile.py"})
LAYOUT_FOLDERS = frozenset({"src", "lib", "python"})  # hold packages; a folder of that name is no package's
GLOB = frozenset("*?[")
WORDS = re.compile(r"[\s'\"`=:;,()]+")
Scope = ast.AST


def source_reads(
    base: Snapshot, head: Snapshot, changed: list[str], is_test_file: Callable[[str], bool]
) -> list[Finding]:
    """Head's added lines of test code, among the `changed` paths, that
    read library source or bytecode."""
    shipped = shipped_code(head) or code_file
    library = Library([p for p in head.paths if code_file(p) and shipped(p) and not is_test_code(p, is_test_file)])
    found = []
    for path in (p for p in changed if p.endswith(".py") and is_test_code(p, is_test_file)):
        text = head.text(path) or ""
        tree = parse_python(text)
        if tree is None:
            continue  # it does not collect: the runs say so
        added = added_lines(base.text(path) or "", text)
        lines = text.split("\n")
        for number in sorted(added & Reader(tree, library).lines()):
            found.append(Finding(f"{path}:{number}", f"{WHAT}: {lines[number - 1].strip()[:80]}"))
    return found


def is_test_code(path: str, is_test_file: Callable[[str], bool]) -> bool:
    """A test module, a conftest.py, or a helper in a test folder."""
    parts = PurePosixPath(path).parts
    return is_test_file(path) or parts[-1] == "conftest.py" or any(p in TEST_FOLDERS for p in parts[:-1])


class Library:
    """Head's library modules: their paths, file names and folders."""

    def __init__(self, paths: list[str]):
        self.paths = frozenset(p for p in paths if PurePosixPath(p).name not in NOT_LIBRARY)
        self.names = frozenset(PurePosixPath(p).name for p in self.paths)
        self.folders = frozenset(
            str(f)
            for p in self.paths
            for f in PurePosixPath(p).parents
            if str(f) != "." and str(f) not in LAYOUT_FOLDERS
        )
        # the top-level names they import as (a src/ layout's packages under src/)
        self.tops = frozenset(_top(p) for p in self.paths)

    def names_file(self, text: str) -> bool:
        """Whether a word of `text` is a library module's path (a shell command's too)."""
        for word in WORDS.split(text):
            parts = word.split("/")  # the path itself, or it under a folder of its own ("/tmp/tree/pkg/core.py")
            if any("/".join(parts[i:]) in self.paths for i in range(len(parts))):
                return True
        return False

    def names_folder(self, text: str) -> bool:
        return text.strip().removeprefix("./").rstrip("/") in self.folders


class Reader:
    """One test module's tree: which lines read library source or bytecode."""

    def __init__(self, tree: ast.Module, library: Library):
        self.tree, self.library = tree, library
        self.parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        self.imports = imported_names(tree)
        self.defined = frozenset(
            node.name
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        )

    def lines(self) -> set[int]:
        hits: set[int] = set()
        locating: set[Scope] = set()
        maybe: list[tuple[Scope, int]] = []  # a file name or pattern: a read where its scope finds the package
        for node in ast.walk(self.tree):
            if self.reads(node):
                hits.add(getattr(node, "lineno", 0))
            if self.locates(node):
                locating.add(self.scope(node))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and self.python_file(node.value):
                maybe.append((self.scope(node), node.lineno))
        return hits | {line for scope, line in maybe if scope in locating}

    def reads(self, node: ast.AST) -> bool:
        """A use of a source-reading function, a code object, a module's file as a file, a library path."""
        if (
            isinstance(node, (ast.Name, ast.Attribute))
            and not isinstance(self.parents.get(node), ast.Attribute)
            and self.reading_function(node)
        ):
            call = self.parents.get(node)
            return not (isinstance(call, ast.Call) and call.func is node and call.args and self.foreign(call.args[0]))
        if isinstance(node, ast.Attribute):
            if node.attr in CODE_ATTRIBUTES:
                return not self.foreign(node.value)
            return node.attr == "origin" and self.is_spec(node.value) or node.attr == "__file__" and self.as_file(node)
        if isinstance(node, ast.Call) and self.qualified(node.func) == "getattr" and len(node.args) >= 2:
            key = node.args[1]
            return (
                isinstance(key, ast.Constant)
                and key.value in CODE_ATTRIBUTES | {"__file__"}
                and not self.foreign(node.args[0])
            )
        return isinstance(node, ast.Constant) and isinstance(node.value, str) and self.library.names_file(node.value)

    def reading_function(self, node: ast.AST) -> bool:
        """inspect's source functions, linecache's and dis's, as the module's imports name them."""
        name = self.qualified(node) if self.root(node) in self.imports else None
        return bool(name) and (
            str(name).startswith(tuple(f"{m}." for m in READING_MODULES))
            or str(name).startswith("inspect.")
            and str(name).split(".")[-1] in SOURCE_FUNCTIONS
        )

    def as_file(self, node: ast.Attribute) -> bool:
        """`mod.__file__` of a module that may be the library's, read as a file: not
        set or deleted, not compared as a path, not only a way to its folder."""
        if not isinstance(node.ctx, ast.Load) or isinstance(self.parents.get(node), ast.Compare):
            return False
        return not self.foreign(node.value) and not self.folder_of(node)

    def locates(self, node: ast.AST) -> bool:
        """Finds the package's files: a module's file, path or spec, importlib.resources, its folder by name."""
        if isinstance(node, ast.Attribute) and node.attr in LOCATING_ATTRIBUTES:
            return True
        if isinstance(node, ast.Call):
            return (self.qualified(node.func) or "").startswith(LOCATING_CALLS)
        return isinstance(node, ast.Constant) and isinstance(node.value, str) and self.library.names_folder(node.value)

    def python_file(self, text: str) -> bool:
        """A library module's file name, or a pattern or suffix of python files."""
        name = text.strip().rsplit("/", 1)[-1]
        return name in self.library.names or name.endswith(".py") and (bool(GLOB & set(name)) or name == ".py")

    def folder_of(self, node: ast.Attribute) -> bool:
        """Whether `mod.__file__` is only a way to its folder or a look at its
        path (dirname, Path(...).parent, .parts, .name): none reads the file."""
        current: ast.AST = node
        while (
            (call := self.parents.get(current)) is not None
            and isinstance(call, ast.Call)
            and current in call.args
            and self.qualified(call.func) in SAME_FILE
        ):
            current = call
        call = self.parents.get(current)
        if not isinstance(call, ast.Call) or current not in call.args:
            return False
        name = self.qualified(call.func) or ""
        if name in {"os.path.dirname", "os.path.split", "os.path.basename", "os.path.splitext"}:
            return True
        return name in PATHS and self.parent_taken(call)

    def parent_taken(self, path: ast.AST) -> bool:
        """`Path(...)` followed, through resolve() or absolute(), by a part of
        the path (`.parent`, `.parts`, `.name`...)."""
        current = path
        while isinstance(up := self.parents.get(current), ast.Attribute):
            if up.attr in PATH_PARTS:
                return True
            call = self.parents.get(up)
            if up.attr not in SAME_FILE or not isinstance(call, ast.Call):
                return False
            current = call
        return False

    def foreign(self, node: ast.AST) -> bool:
        """Whether `node` is surely not the library's: defined in the test file
        itself, or imported from outside the project (`pytest`). A name bound
        otherwise (a parameter, sys.modules[...]) cannot be told apart."""
        root = self.root(node)
        if root is None:
            return False
        if root in self.imports:
            return self.imports[root].split(".")[0] not in self.library.tops
        return root in self.defined

    def root(self, node: ast.AST) -> str | None:
        while isinstance(node, ast.Attribute):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    def is_spec(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute) and node.attr == "__spec__":
            return True
        return isinstance(node, ast.Call) and self.qualified(node.func) == "importlib.util.find_spec"

    def qualified(self, node: ast.AST) -> str | None:
        """A dotted name as the module's imports spell it; a method's bare name otherwise."""
        if isinstance(node, ast.Name):
            return self.imports.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            inner = self.qualified(node.value)
            return f"{inner}.{node.attr}" if inner else node.attr
        return None

    def scope(self, node: ast.AST) -> Scope:
        current = node
        while (up := self.parents.get(current)) is not None:
            if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return up
            current = up
        return self.tree


def _top(path: str) -> str:
    parts = PurePosixPath(path).parts
    parts = parts[1:] if len(parts) > 1 and parts[0] in LAYOUT_FOLDERS else parts
    return parts[0].removesuffix(".py")


def imported_names(tree: ast.Module) -> dict[str, str]:
    """Each name the module binds by import, as the dotted name it stands for."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = _backport(
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = _backport(f"{node.module}.{alias.name}")
    return names


def _backport(name: str) -> str:
    return (
        "importlib.resources" + name[len("importlib_resources") :] if name.startswith("importlib_resources") else name
    )
