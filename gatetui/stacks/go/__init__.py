"""Go: `go build` and `go vet`, then `go test -json`, read as test2json events."""

from __future__ import annotations

from gatetui.stacks.base import Stack, TestLanguage
from gatetui.stacks.go import hooks, profile, tests

GO = TestLanguage("go", (".go",), tests.looks_like_go_test, tests.go_test_defs, tests.go_scan)

STACK = Stack(
    name="go",
    markers=("go.mod",),
    load=lambda base, settings: profile.go_profile(STACK, base, settings),
    test_file=profile.is_test_file,
    needs=("go",),
    languages=(GO,),
    indexes=("go",),
    scan_hooks=hooks.scan_hooks,
)
