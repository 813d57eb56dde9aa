"""Node: `npm ci`, vitest or `node --test`, JUnit by the runner's reporter."""

from __future__ import annotations

from gatetui.config import Settings
from gatetui.git.snapshot import Snapshot
from gatetui.stacks.base import Stack
from gatetui.stacks.node import hooks, profile, tests
from gatetui.stacks.profile import Profile
from gatetui.stacks.testdefs import TestLanguage

JS = TestLanguage(
    "js",
    (".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".mts", ".cts"),
    tests.looks_like_js_test,
    tests.js_test_defs,
    tests.js_scan,
)


def _load(base: Snapshot, settings: Settings) -> Profile:
    return profile.node_profile(STACK, base, settings)


STACK: Stack = Stack(
    name="node",
    markers=("package.json",),
    load=_load,
    test_file=profile.is_test_file,
    needs=("node", "npm"),
    languages=(JS,),
    default_sections=profile.DEFAULT_SECTIONS,
    indexes=("npm",),
    scan_hooks=hooks.scan_hooks,
)
