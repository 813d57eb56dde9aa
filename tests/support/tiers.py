"""Test tiers by what a test needs, checked while it runs.

`make test-fast` runs the tests marked neither `sandbox` nor `install` nor
`drives`; the marks say what a test needs, not a guess at its speed. A mark
that is missing would quietly put a slow, machine-dependent test in the fast
tier, so each test is watched: a test that opens a sandbox (a local or
runtime workspace, an emulator sandbox, or a `gatetui` process that gates),
runs an install (pip, uv or npm installing into a fresh environment) or
drives a real program (a test runner or a stack's toolchain in a child
process: pytest, go, node, npm; or the Textual app) without its mark fails at
teardown, naming the mark to add.

What is watched is this process: a gate inside a `gatetui` child process is
seen only as that process's start (`GATING_COMMANDS`).
"""

from __future__ import annotations

import functools
import re
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest

NEEDS = {
    "sandbox": "runs commands in the gate's sandbox: the local backend's processes (uids, namespaces) "
    "or the runtime emulator's sandboxes",
    "install": "installs a project for real: pip, uv or npm into a fresh environment, from the package registry",
    "drives": "drives a real program, half a second or more each: a test runner or a stack's toolchain in a "
    "child process (pytest, go, node, npm), or the Textual app",
}
INSTALL = re.compile(r"\b(pip|uv|npm)\b[^\n;&|]*\b(install|ci|sync)\b")
GATING_COMMANDS = frozenset({"check", "serve", "mcp", "demo", "lab", "submit"})
SHELL_WORDS = re.compile(r"[\s;&|()]+")
TOOLCHAINS = frozenset({"pytest", "go", "node", "npm", "npx", "vitest"})  # started by name, or python's -m pytest

seen: set[str] = set()  # what the running test needed so far


def _note(need: str) -> None:
    seen.add(need)


def _watch(owner: Any, name: str, needs: Callable[..., set[str]]) -> None:
    """Wrap `owner.name` so each call notes what `needs(*args, **kwargs)` says."""
    original = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        seen.update(needs(*args, **kwargs))
        return original(*args, **kwargs)

    setattr(owner, name, wrapper)


def _command_needs(_self: Any, command: str, *_: Any, **__: Any) -> set[str]:
    return {"install"} if INSTALL.search(command) else set()


def _argv_needs(argv: Any) -> set[str]:
    words = [str(w) for w in argv] if isinstance(argv, (list, tuple)) else str(argv).split()
    needs = {"install"} if INSTALL.search(" ".join(words)) else set()
    for i, word in enumerate(words[:-2]):
        if word == "-m" and words[i + 1] == "gatetui" and words[i + 2] in GATING_COMMANDS:
            needs.add("sandbox")
    if _drives(words):
        needs.add("drives")
    return needs


def _drives(words: list[str]) -> bool:
    """Whether a child's argv starts a toolchain: by name, as python's
    `-m pytest`, or as a command of the shell script it runs."""
    if not words:
        return False
    name = words[0].rsplit("/", 1)[-1]
    if name in ("sh", "bash") and len(words) > 2 and words[1] == "-c":
        script = " ".join(words[2:])
        return "-m pytest" in script or any(w.rsplit("/", 1)[-1] in TOOLCHAINS for w in SHELL_WORDS.split(script))
    return name in TOOLCHAINS or words[1:3] == ["-m", "pytest"]


def install_watches() -> None:
    from textual.app import App

    from gatetui.backends.local import LocalBackend
    from gatetui.backends.local_workspace import LocalWorkspace
    from gatetui.backends.runtime import RuntimeBackend
    from gatetui.backends.runtime_workspace import RuntimeWorkspace
    from tests.runtime_emulator.state import Box, Proc

    for backend in (LocalBackend, RuntimeBackend):
        _watch(backend, "open", lambda *_, **__: {"sandbox"})
    for workspace in (LocalWorkspace, RuntimeWorkspace):
        _watch(workspace, "run", _command_needs)
    _watch(Box, "__init__", lambda *_, **__: {"sandbox"})
    _watch(Proc, "__init__", lambda _self, _box, argv, *_, **__: _argv_needs(argv))
    _watch(subprocess.Popen, "__init__", lambda _self, args, *_, **__: _argv_needs(args))
    for method in ("run_test", "run_async"):  # Pilot's way in, and the one App.run and the snapshots take
        _watch(App, method, lambda *_, **__: {"drives"})


def pytest_configure(config: pytest.Config) -> None:
    for name, why in NEEDS.items():
        config.addinivalue_line("markers", f"{name}: {why}")
    install_watches()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Watch from the start of the test's setup: a module's or the session's
    fixture that opens sandboxes does so in the setup of its first user."""
    seen.clear()


@pytest.fixture(autouse=True)
def needs_are_marked(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test that needed what it is not marked for."""
    yield
    marked = {mark.name for mark in request.node.iter_markers() if mark.name in NEEDS}
    if marked & {"sandbox", "install"}:
        marked.add("drives")  # what a sandbox or an install runs is a real program already: no third mark
    missing = sorted(seen - marked)
    if missing:
        marks = " and ".join(f"@pytest.mark.{m}" for m in missing)
        pytest.fail(
            f"this test {'; and '.join(NEEDS[m] for m in missing)}: mark it {marks} "
            "(or its module's pytestmark), so that `make test-fast` leaves it out",
            pytrace=False,
        )
