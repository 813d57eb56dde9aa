"""The python stack's search for inputs that tell a surviving mutant apart
(stacks/mutant_search.py): which function a line is in, the plugin that
records its calls (pytest_record_calls.py), the script that searches
(search_inputs.py) and the hypothesis it searches with.

Only a plain function is searched: one defined at a module's top level,
not async, not a generator, without `*args` or `**kwargs`: its results
come from its arguments, and calling it twice is as good as calling it
once. A method (its object's state), a generator (a new object per call)
or a coroutine keeps the survivor as it was.

hypothesis is the gate's own copy, shipped to the run as one zip (it holds
a compiled part, so the script unpacks it first): head's install need
not have it, and a hypothesis head ships is never the one that searches.
"""

from __future__ import annotations

import ast
import base64
import functools
import importlib
import io
import json
import os
import secrets
import zipfile
import zlib
from pathlib import Path
from types import MappingProxyType, ModuleType

from gatetui.stacks.base import RunPlugin
from gatetui.stacks.mutant_search import MutantSearch, SearchJob

HERE = Path(__file__).parent
RECORDER = (HERE / "pytest_record_calls.py").read_text()
SEARCHER = (HERE / "search_inputs.py").read_text()
HYPOTHESIS = "search_lib.zip"


def target(path: str, text: str, line: int) -> str | None:
    """The plain top-level function whose lines hold `line`, if any."""
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.lineno <= line <= (node.end_lineno or node.lineno):
            return node.name if _plain(node) else None
    return None


def _plain(node: ast.FunctionDef) -> bool:
    if node.args.vararg is not None or node.args.kwarg is not None:
        return False
    return not any(isinstance(inner, (ast.Yield, ast.YieldFrom, ast.Await)) for inner in ast.walk(node))


def recorder(path: str, function: str, out: str) -> RunPlugin:
    module = f"site_{secrets.token_hex(6)}"
    packed = ", ".join(repr(_pack(text.encode())) for text in (path, function, out))
    source = f"{RECORDER}\n_install({packed})\n"
    return RunPlugin(
        MappingProxyType({f"{module}.py": source.encode()}),
        MappingProxyType({"PYTEST_ADDOPTS": f"-p {module}", "PYTHONPATH": "{folder}"}),
    )


def searcher(job: SearchJob) -> tuple[RunPlugin, str]:
    """The script with the job packed in, and hypothesis beside it; run by
    head's interpreter, in the tests' environment, outside pytest."""
    name = f"search_{secrets.token_hex(6)}"
    packed = json.dumps(
        {
            "zip": HYPOTHESIS,
            "module": job.module,
            "function": job.function,
            "calls": [{"args": list(c.args), "kwargs": dict(c.kwargs)} for c in job.calls],
            "mutants": {k: [m.source.decode("utf-8", "replace"), m.line] for k, m in job.mutants.items()},
        }
    )
    script = f"{SEARCHER}\n_main({_pack(packed.encode())!r})\n"
    files = {f"{name}.py": script.encode(), HYPOTHESIS: shipped_hypothesis()}
    return RunPlugin(MappingProxyType(files), MappingProxyType({})), f".venv/bin/python {{folder}}/{name}.py {{out}}"


@functools.cache
def shipped_hypothesis() -> bytes:
    """The gate's hypothesis and what it imports, as one zip (the same bytes each time)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as shipped:
        for package in ("hypothesis", "attr", "attrs", "sortedcontainers"):
            _add_package(shipped, importlib.import_module(package))
        for name in ("_hypothesis_globals", "_hypothesis_ftz_detector"):
            single = Path(str(importlib.import_module(name).__file__))
            _add(shipped, single, single.name)
    return out.getvalue()


def _add_package(shipped: zipfile.ZipFile, package: ModuleType) -> None:
    root = Path(str(package.__file__)).parent
    for folder, dirs, files in sorted(os.walk(root)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            path = Path(folder) / name
            _add(shipped, path, str(path.relative_to(root.parent)))


def _add(shipped: zipfile.ZipFile, path: Path, name: str) -> None:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = 0o644 << 16
    shipped.writestr(info, path.read_bytes(), zipfile.ZIP_DEFLATED)


def _pack(data: bytes) -> str:
    return base64.b85encode(zlib.compress(data, 6)).decode("ascii")


PYTHON_SEARCH = MutantSearch(target, recorder, searcher)
