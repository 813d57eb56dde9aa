"""A pytest plugin that runs the collected tests in a seeded random order.

gatetui's `random_order` setting runs one of the three runs through this
plugin, so a test that passes only after another one ran (shared module
state, a cache, a file left behind) fails in that run and shows up as flaky.

This file is copied into the workspace and imported by the project's own
pytest, in the project's own venv, loaded with `-p gatetui_random_order`:
so it imports nothing from gatetui (which is not installed there) and
nothing but pytest and the standard library. The seed comes from the
environment, so the gate records it and the order can be replayed.

Tests are shuffled in buckets by file: the files' order is shuffled, then
the tests within each file, so a module-scoped fixture is still set up once
per file while a dependency between two tests, in one file or across files,
can still be broken.
"""

from __future__ import annotations

import os
import random

import pytest

SEED_ENV = "GATETUI_RANDOM_SEED"


def _seed() -> int | None:
    value = os.environ.get(SEED_ENV, "").strip()
    return int(value) if value.lstrip("-").isdigit() else None


def pytest_report_header(config: pytest.Config) -> str | None:
    seed = _seed()
    return None if seed is None else f"gatetui random order: seed {seed}"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Last of all hooks, so the order others settle on is the one shuffled."""
    seed = _seed()
    if seed is None:
        return
    rng = random.Random(seed)
    buckets: dict[str, list[pytest.Item]] = {}
    for item in items:
        buckets.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    files = list(buckets)
    rng.shuffle(files)
    shuffled: list[pytest.Item] = []
    for name in files:
        bucket = buckets[name]
        rng.shuffle(bucket)
        shuffled.extend(bucket)
    items[:] = shuffled
