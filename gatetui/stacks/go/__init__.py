"""Go: `go build` and `go vet`, then `go test -json`, read as test2json events."""

from __future__ import annotations

from gatetui.config import Settings
from gatetui.git.snapshot import Snapshot
from gatetui.stacks.base import Stack
from gatetui.stacks.go import hooks, profile, tests
from gatetui.stacks.profile import Profile
from gatetui.stacks.testdefs import TestLanguage

GO = TestLanguage("go", (".go",), tests.looks_like_go_test, tests.go_test_defs, tests.go_scan)


def _load(base: Snapshot, settings: Settings) -> Profile:
    return profile.go_profile(STACK, base, settings)


STACK: Stack = Stack(
    name="go",
    markers=("go.mod",),
    load=_load,
    test_file=profile.is_test_file,
    needs=("go",),
    languages=(GO,),
    indexes=("go",),
    scan_hooks=hooks.scan_hooks,
)
