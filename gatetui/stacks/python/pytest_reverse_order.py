"""A pytest plugin that runs the collected tests in reverse order.

With gatetui's `random_order` setting, run 1 goes through this plugin: a
test that passes only because one declared before it ran (shared module
state, a cache, a file left behind) runs before that one here, and fails
every time, where a shuffle breaks a given pair only half the time. A
test that breaks one declared before it is caught the same way.

The whole list is reversed, so each file's tests (and each class's) stay
together and a module- or class-scoped fixture is still set up once.
Like the random-order plugin, it is copied into the workspace and loaded
with `-p gatetui_reverse_order` by the project's own pytest: it imports
nothing but pytest.
"""

from __future__ import annotations

import pytest


def pytest_report_header(config: pytest.Config) -> str:
    return "gatetui order: reverse"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Last of all hooks, so the order others settle on is the one reversed."""
    items.reverse()
