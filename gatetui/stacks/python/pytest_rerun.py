"""Written into a run's copy by the gate (gatetui.gate.judging.reruns): every test
collected runs GATETUI_RERUNS times, each as a case of its own, so a new
test that fails one time in three shows in one short process.

The approach is pytest-repeat's (an indirectly parametrized fixture every
test function asks for); written here because the gate cannot install a
plugin into head's environment, and needs a case id it can strip again.

For the fresh process that confirms a rerun failure (gatetui.gate.judging.fresh):
GATETUI_RERUN_AFRESH names the cases (by number, comma-separated) before
which the test's own module is run again in its namespace (its
module-level names made anew, as a new process would make them, while what
it imported stays imported), and
GATETUI_RERUN_ONLY the one case of a parametrized test wanted (its name
without the rerun's part), since pytest selects no parametrized case by
its id once the plugin has added a parameter of its own.
"""

from __future__ import annotations

import os
import re
from types import ModuleType

import pytest

PARAM = "gatetui_rerun_step"
MARK = "gatetui-rerun-"
CASE = re.compile(r"\[gatetui-rerun-\d+\]$|-gatetui-rerun-\d+(?=\]$)")
STEP = re.compile(r"gatetui-rerun-(\d+)\]$")


def _numbers(name: str) -> list[int]:
    return [int(word) for word in os.environ.get(name, "").split(",") if word.isdigit()]


@pytest.fixture
def gatetui_rerun_step(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before a case GATETUI_RERUN_AFRESH names, ahead of its fixtures. A
    hook, not the parameter's fixture: pytest 8 makes the cases from the
    parameter without ever setting its fixture up."""
    case = STEP.search(item.name)
    afresh = case is not None and int(case.group(1)) in _numbers("GATETUI_RERUN_AFRESH")
    if afresh and isinstance(item, pytest.Function):
        _load_afresh(item.module)


def _load_afresh(module: ModuleType) -> None:
    """The module's code run again in its own namespace, by its own loader
    (pytest's, which rewrites asserts): the test function, bound to that
    namespace, sees the names made anew."""
    spec = module.__spec__
    if spec is None or spec.loader is None:
        raise RuntimeError(f"gatetui: {module.__name__} cannot be loaded afresh")
    spec.loader.exec_module(module)


@pytest.hookimpl(trylast=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    count = max(_numbers("GATETUI_RERUNS"), default=0)
    if count > 1:
        metafunc.fixturenames.append(PARAM)
        metafunc.parametrize(PARAM, range(count), indirect=True, ids=lambda i: f"{MARK}{i + 1}")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    only = os.environ.get("GATETUI_RERUN_ONLY", "")
    if not only:
        return
    wanted = [CASE.sub("", item.name).removesuffix("[]") == only for item in items]
    if not all(wanted):
        config.hook.pytest_deselected(items=[item for item, keep in zip(items, wanted) if not keep])
        items[:] = [item for item, keep in zip(items, wanted) if keep]
