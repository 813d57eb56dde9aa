"""Python: pip into a fresh venv, pytest, JUnit by pytest's own writer."""

from __future__ import annotations

from gatetui.config import Settings
from gatetui.git.snapshot import Snapshot
from gatetui.globs import matches
from gatetui.stacks.base import Stack
from gatetui.stacks.profile import Profile
from gatetui.stacks.python import hooks, profile, tests
from gatetui.stacks.python.marker_keys import python_marker_keys
from gatetui.stacks.testdefs import TestLanguage

PYTHON = TestLanguage(
    "python", (".py",), tests.looks_like_python_test, tests.python_test_defs, tests.python_scan, python_marker_keys
)


def is_test_file(profile: Profile, path: str) -> bool:
    """A module pytest collects (its default names, or base's python_files
    under its test paths), or a conftest."""
    name = path.rsplit("/", 1)[-1]
    return path.endswith(".py") and (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or matches(path, profile.suite.globs)
    )


def _load(base: Snapshot, settings: Settings) -> Profile:
    return profile.python_profile(STACK, base, settings)


STACK: Stack = Stack(
    name="python",
    markers=("pyproject.toml", "setup.py", "setup.cfg"),
    load=_load,
    test_file=is_test_file,
    needs=("python3",),
    languages=(PYTHON,),
    default_sections=profile.DEFAULT_SECTIONS,
    indexes=("pip",),
    scan_hooks=hooks.scan_hooks,
    importable=profile.importable_packages,
)
