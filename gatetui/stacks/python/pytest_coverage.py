"""Written into one run's copy by the gate (gatetui.gate.phases.coverage):
which test executes which line of the files head changed, measured by
coverage.py (lines and branches) with one dynamic context per test, the
test's node id.

Loaded with `-p`, so measuring starts at import, before any conftest
imports the library. The coverage.py it imports is the gate's own, written
beside this file (first on PYTHONPATH), never one from head's environment;
head's coverage settings are not read (config_file=False). What it writes
is read back by the gate as hostile input (coverage_lines.py).
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from typing import Any

import pytest

FORMAT = "gatetui-coverage-1"
ROOT = os.getcwd()
_state: dict[str, Any] = {"problem": ""}


def _start() -> Any:
    """A started Coverage over the files asked, or None with the problem said."""
    try:
        import coverage

        files = [p for p in json.loads(os.environ.get("GATETUI_COVERAGE_FILES", "[]")) if isinstance(p, str)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cov = coverage.Coverage(
                data_file=None,
                config_file=False,
                branch=True,
                include=[os.path.join(ROOT, p) for p in files] or [os.path.join(ROOT, "*")],
            )
            cov.set_option("run:core", "ctrace")  # dynamic contexts; the pure-python tracer if no C one loads
            cov.start()
        return cov
    except Exception as err:  # noqa: BLE001 - said in the report, never a broken run
        _state["problem"] = f"coverage could not start: {type(err).__name__}: {err}"
        return None


_COV = _start()


def _switch(context: str) -> None:
    if _COV is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _COV.switch_context(context)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """Every line a test's setup, call and teardown execute is the test's."""
    _switch(item.nodeid)
    yield
    _switch("")


def pytest_configure(config: pytest.Config) -> None:
    """Another measurement in this process (pytest-cov's --cov) would pause
    this one: said, so the gate does not take its silence for lines no test ran."""
    if config.pluginmanager.hasplugin("_cov") and getattr(config.option, "cov_source", None):
        _state["problem"] = "another coverage measurement runs in this process (pytest-cov's --cov)"


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """The report, once the session's fixtures are torn down (an xdist
    worker's before it says it finished, or its controller may end it
    first), beside it as REPORT.gwN (the gate reads them in turn)."""
    config = session.config
    path = os.environ.get("GATETUI_COVERAGE_REPORT")
    if not path:
        return
    worker = str(getattr(config, "workerinput", {}).get("workerid", ""))
    if worker:
        path = f"{path}.{worker}"
    try:
        out = _measured()
    except Exception as err:  # noqa: BLE001 - said in the report
        out = {"format": FORMAT, "problem": f"coverage could not be read: {type(err).__name__}: {err}"}
    with open(path, "w", encoding="utf-8") as report:
        json.dump(out, report)


def _measured() -> dict[str, Any]:
    if _COV is None or _state["problem"]:
        return {"format": FORMAT, "problem": _state["problem"] or "coverage did not start"}
    current = sys.gettrace()
    current = getattr(current, "__self__", current)  # the pure-python tracer is a bound method
    if not any(current is tracer for tracer in getattr(_COV._collector, "tracers", [current])):
        return {"format": FORMAT, "problem": "another tracer replaced coverage's during the run"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _COV.stop()
        data = _COV.get_data()
    contexts = sorted(data.measured_contexts())
    index = {name: i for i, name in enumerate(contexts)}
    files: dict[str, dict[str, list[int]]] = {}
    for name in sorted(data.measured_files()):
        rel = os.path.relpath(name, ROOT)
        if rel.startswith(".."):
            continue
        by_line = data.contexts_by_lineno(name)
        files[rel.replace(os.sep, "/")] = {
            str(line): sorted(index[c] for c in found) for line, found in sorted(by_line.items())
        }
    return {"format": FORMAT, "contexts": contexts, "files": files}
