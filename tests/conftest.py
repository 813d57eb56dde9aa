"""Shared fixtures: real git repositories built in tmp_path."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from gatetui.backends.uids import UID_COUNT, UID_FIRST

# The helpers in tests/support assert too: their failures show the values
# compared, as a test's do (pytest rewrites only what it is told of before import).
pytest.register_assert_rewrite("tests.support")

from tests.support.repos import MakeRepo, git, write_tree  # noqa: E402

pytest_plugins = ["tests.support.tiers"]  # the `sandbox` and `install` marks, checked as each test runs
# tests/browser drives chromium: only `make test-browser` (CI, after the rest) collects it
collect_ignore = [] if os.environ.get("GATETUI_BROWSER") else ["browser"]

# Hypothesis checks every property as written; what it may not do here is
# time itself. These machines are shared and noisy: "input generation is
# slow" failed a parser's property under load in CI, though every input was
# fine. Speed is measured in `make bench`, never asserted in a test.
settings.register_profile("shared-machine", suppress_health_check=[HealthCheck.too_slow], deadline=None)
settings.load_profile("shared-machine")


def worker_uid_range(worker: str, workers: int) -> str:
    """GATETUI_UID_RANGE for one pytest-xdist worker: a share of the gate's
    uid range of its own, so two workers' runs never claim the same uid and
    a worker's "no process of a run's uid is left" sees its own runs only.
    The range's last uid stays out: the isolation probe borrows it."""
    share = (UID_COUNT - 1) // max(workers, 1)
    first = UID_FIRST + int(worker.removeprefix("gw") or 0) * share
    return f"{first}-{first + share - 1}"


if "PYTEST_XDIST_WORKER" in os.environ and "GATETUI_UID_RANGE" not in os.environ:
    os.environ["GATETUI_UID_RANGE"] = worker_uid_range(
        os.environ["PYTEST_XDIST_WORKER"], int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    )


def _collect_what_the_test_left() -> Iterator[None]:
    """What a test left open (a socket, a file, an event loop) is collected
    at its own teardown, while pytest still counts it as that test's: the
    ResourceWarning, an error in this suite, then fails the test that leaked,
    not whichever test the collector happened to run in. What survives is
    frozen (gc.freeze): the next test's collection looks only at what was
    made since, not again at the whole worker's heap (a gated samples
    fixture, Textual), which cost about 0.05 s at each of 1,800 teardowns."""
    yield
    gc.collect()
    gc.freeze()


def _collect_everything() -> Iterator[None]:
    """Autouse fixtures are set up first, so they are torn down last of
    their scope: one per module and one for the session collect the whole
    heap, the frozen part too, and so catch what a module's or the
    session's fixtures leave (blamed on the last test that used them)."""
    yield
    gc.unfreeze()
    gc.collect()
    gc.freeze()


collect_after_each_test = pytest.fixture(autouse=True, name="collect_after_each_test")(_collect_what_the_test_left)
collect_after_each_module = pytest.fixture(autouse=True, scope="module", name="collect_after_each_module")(
    _collect_everything
)
collect_after_the_session = pytest.fixture(autouse=True, scope="session", name="collect_after_the_session")(
    _collect_everything
)


@pytest.fixture
def make_repo(tmp_path: Path) -> MakeRepo:
    """A repo with `main` at base files and `agent/x` at base + head edits
    (a None value deletes the file)."""

    def make(base: Mapping[str, str], head: Mapping[str, str | None]) -> Path:
        repo = tmp_path / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        write_tree(repo, base)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "base")
        git(repo, "checkout", "-qb", "agent/x")
        for rel, text in head.items():
            if text is None:
                (repo / rel).unlink()
            else:
                write_tree(repo, {rel: text})
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "head")
        git(repo, "checkout", "-q", "main")
        return repo

    return make


@pytest.fixture(scope="session")
def gated_samples(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """The samples of the selected tests' tier gated once, in surroundings an attacker would want."""
    from tests.support.gated_samples import Gated, gate_all, surroundings, wanted

    root = tmp_path_factory.mktemp("samples")
    with surroundings() as around:
        yield Gated(gate_all(root, around, wanted(request.session.items)), around, root)
