"""Python's line coverage: the pytest plugin and the gate's own coverage.py
written into the measured run (pytest_coverage.py), its report read back
as hostile input, and which changed lines are statements.

The run's environment is head's, installed from scratch: it holds no
coverage.py the gate could trust, and may hold one of head's choosing. So
the gate writes its own copy beside the plugin, first on PYTHONPATH (its C
tracer loads where the interpreter matches the gate's, the pure-python one
elsewhere). Statements are coverage.py's own analysis of head's text, run
here, never read from the sandbox.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from coverage.parser import PythonParser

from gatetui.pyparse import parse_python
from gatetui.stacks.base import LineCoverage, Reached, ReportProblem, RunPlugin
from gatetui.stacks.python.function_headers import headers
from gatetui.stacks.python.project_code import shipped_code
from gatetui.stacks.python.type_guards import type_checking_guards

HERE = Path(__file__).parent
REPORT = "coverage.json"
FORMAT = "gatetui-coverage-1"
MAX_BYTES = 32 << 20
MAX_CONTEXTS = 200_000
MAX_ID = 4096  # characters of one test id
MAX_ENTRIES = 5_000_000  # (line, test) pairs over the files asked
MAX_LINE = 10_000_000


@functools.cache
def _files() -> dict[str, bytes]:
    """The plugin, and every module of the gate's coverage package (and its
    compiled tracer), by path under the run's gate folder."""
    spec = importlib.util.find_spec("coverage")
    assert spec is not None and spec.submodule_search_locations  # a dependency of the gate's own
    package = Path(next(iter(spec.submodule_search_locations)))
    files = {"gatetui_coverage.py": (HERE / "pytest_coverage.py").read_bytes()}
    for path in sorted(package.iterdir()):
        if path.is_file() and (path.suffix == ".py" or path.name.startswith("tracer.") and path.suffix == ".so"):
            files[f"coverage/{path.name}"] = path.read_bytes()
    return files


class _PluginFiles(Mapping[str, bytes]):
    """Read on first use: only a run that measures writes them."""

    def __getitem__(self, key: str) -> bytes:
        return _files()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(_files())

    def __len__(self) -> int:
        return len(_files())


PLUGIN = RunPlugin(
    _PluginFiles(),
    MappingProxyType(
        {
            "PYTEST_ADDOPTS": "-p gatetui_coverage",
            "PYTHONPATH": "{folder}",
            "GATETUI_COVERAGE_REPORT": "{report}",
            "GATETUI_COVERAGE_FILES": "{files}",
        }
    ),
)


def read_coverage(raw: bytes, wanted: Mapping[str, str]) -> Reached:
    """The report's lines of the `wanted` files (head's text of each), each
    with the ids of the tests that ran it (none: it ran only in the empty
    context, outside any test: at import or collection). A line is counted
    as its statement's first, as coverage.py's analysis counts it: python
    reports no line event for the `if (` that opens a condition over
    several lines, only for the lines of the condition. Anything malformed
    raises ReportProblem, one line."""
    if len(raw) > MAX_BYTES:
        raise ReportProblem(f"coverage report over {MAX_BYTES >> 20} MB")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ReportProblem("coverage report is not JSON") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ReportProblem("coverage report is not the gate's")
    problem = data.get("problem")
    if problem is not None:
        raise ReportProblem(" ".join(str(problem).split())[:300] or "coverage was not measured")
    contexts = _contexts(data.get("contexts"))
    files = data.get("files")
    if not isinstance(files, dict):
        raise ReportProblem("coverage report has no files table")
    reached: dict[tuple[str, int], frozenset[str]] = {}
    entries = 0
    for path in sorted(set(wanted) & set(files)):
        parser = _parsed(wanted[path])
        for line, tests in _lines(files[path], contexts):
            entries += len(tests) + 1
            if entries > MAX_ENTRIES:
                raise ReportProblem("coverage report holds too many entries")
            key = (path, parser.first_line(line) if parser is not None else line)
            reached[key] = reached.get(key, frozenset()) | tests
    return MappingProxyType(reached)


def _contexts(value: Any) -> list[str]:
    if not isinstance(value, list) or len(value) > MAX_CONTEXTS:
        raise ReportProblem("coverage report's contexts are not a list of test ids")
    if not all(isinstance(c, str) and len(c) <= MAX_ID for c in value):
        raise ReportProblem("coverage report's contexts are not a list of test ids")
    return value


def _lines(table: Any, contexts: list[str]) -> Iterator[tuple[int, frozenset[str]]]:
    if not isinstance(table, dict):
        raise ReportProblem("coverage report's lines are not a table")
    for key, found in table.items():
        if not (isinstance(key, str) and key.isascii() and key.isdigit() and 0 < int(key) <= MAX_LINE):
            raise ReportProblem("coverage report names a line that is not a line number")
        if not isinstance(found, list) or not all(type(i) is int and 0 <= i < len(contexts) for i in found):
            raise ReportProblem("coverage report's tests of a line are not context numbers")
        yield int(key), frozenset(contexts[i] for i in found if contexts[i])


BUILD_SCRIPTS = frozenset({"setup.py", "noxfile.py", "fabfile.py", "docs/conf.py", "doc/conf.py"})


def code_file(path: str) -> bool:
    """Python the tests could run: not the scripts a build or a tool runs
    (setup.py runs in the install, never under a test)."""
    return path.endswith(".py") and path not in BUILD_SCRIPTS


def statements(text: str, changed: frozenset[int]) -> frozenset[int]:
    """The statements among `changed` lines, each as its first line (where
    coverage records it): no blank line, comment or docstring, nothing
    under `if TYPE_CHECKING:` (type_guards.py), and no line head marked to
    exclude (its `pragma: no cover` excuses nothing here). Text that does
    not parse has none: its import fails the runs."""
    parser = _parsed(text)
    if parser is None:
        return frozenset()
    firsts = (parser.first_line(line) for line in changed)
    return frozenset(line for line in firsts if line in parser.statements)


@functools.lru_cache(maxsize=4)  # a file's text is analysed when planned and again when its report is read
def _parsed(text: str) -> PythonParser | None:
    """coverage.py's analysis of head's text, the gate's exclusion of
    type-checking blocks given where the module has some. Where the pattern
    also matches a line that is not such an `if` (the same words inside a
    string), the text is analysed without it: nothing else is left out."""
    tree = parse_python(text)
    if tree is None:
        return None
    guards = type_checking_guards(tree)
    parser = _parser(text, guards.pattern)
    if parser is not None and guards.pattern is not None and not parser.lines_matching(guards.pattern) <= guards.lines:
        return _parser(text, None)
    return parser


def _parser(text: str, exclude: str | None) -> PythonParser | None:
    try:
        parser = PythonParser(text=text, exclude=exclude)
        parser.parse_source()
    except Exception:  # noqa: BLE001 - coverage's NotPython, a SyntaxError, a tokenizer's error
        return None
    return parser


PYTHON_COVERAGE = LineCoverage(
    PLUGIN,
    REPORT,
    read_coverage,
    code_file,
    statements,
    shipped_code,
    headers,
    fail_fast=MappingProxyType({"PYTEST_ADDOPTS": "-x"}),
)
