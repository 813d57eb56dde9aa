"""A sealing rules file stricter than the default, for the lab's tests."""

from __future__ import annotations

# Rules a team might try first: never edit an existing test, never touch the
# project file. The honest fix edits tests/test_leap.py; the version bump
# edits pyproject.toml outside its sealed section.
STRICT = """
[tool.gatetui.seal]
paths = ["tests/**"]

[[tool.gatetui.seal.rules]]
name = "existing tests"
paths = ["tests/**"]
on_change = "fail"
allow_new = true

[[tool.gatetui.seal.rules]]
name = "project file"
paths = ["pyproject.toml"]
on_change = "fail"
"""
