"""Written into a run's copy by the gate (gatetui.gate.rerun): every test
collected runs GATETUI_RERUNS times, each as a case of its own, so a new
test that fails one time in three shows in one short process.

The approach is pytest-repeat's (an indirectly parametrized fixture every
test function asks for); written here because the gate cannot install a
plugin into head's environment, and needs a case id it can strip again.
"""

from __future__ import annotations

import os

import pytest

PARAM = "gatetui_rerun_step"
MARK = "gatetui-rerun-"


@pytest.fixture
def gatetui_rerun_step(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.hookimpl(trylast=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    count = int(os.environ.get("GATETUI_RERUNS", "0") or 0)
    if count > 1:
        metafunc.fixturenames.append(PARAM)
        metafunc.parametrize(PARAM, range(count), indirect=True, ids=lambda i: f"{MARK}{i + 1}")
