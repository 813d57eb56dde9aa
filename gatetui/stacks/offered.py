"""What a checked environment offers the test runs: the runner's plugins
that distributions the environment check verified declare, and the
runner's version. The gate names these, and only these, to every run
(EnvironmentCheck.loads); nothing in the tree registers a plugin."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OfferedPlugin:
    """A runner plugin a distribution the environment check verified offers."""

    name: str  # the plugin's name (python: a pytest11 entry point's)
    dist: str  # its distribution's
    own: bool  # installed from a local folder (head's own project, a path in the tree), not an index


@dataclass(frozen=True)
class Offered:
    """What the checked environment offers the runs: the runner's plugins,
    and the runner's version ("" where the check found none)."""

    plugins: tuple[OfferedPlugin, ...] = ()
    runner: str = ""
