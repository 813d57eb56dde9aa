"""The order run: one of the three runs in an order the source's never
gives, so a test that passes only because another ran before it fails
there every time, not by the luck of one shuffle.

A stack declares how its runner does it (`Suite.reorder`): pytest and
node's test runner run every test in reverse order, so each runs before
every test declared before it; go test cannot reorder a package's tests
(`-run` selects, in source order), so each test runs alone in a process
of its own, without any test declared before it. `label` is how the
run's name says which (`run 1 (reverse order)`).
"""

from __future__ import annotations

from dataclasses import dataclass

from gatetui.stacks.base import RunPlugin


@dataclass(frozen=True)
class Reorder:
    plugin: RunPlugin  # what the gate writes into the run's copy, and the environment that loads it
    label: str  # "reverse order", "each test alone"
