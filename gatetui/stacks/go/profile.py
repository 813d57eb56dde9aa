"""The go stack's profile: `go build` in a fresh module cache, then `go vet`
(its findings judged against base's: vet.py), `go test -json` for every
run, `-shuffle` with the plan's seed.

Go's build runs no code of the project's (no build scripts; `go generate`
is never run), so the install's module cache can be handed on as the
environment: it lives in `.gatetui-go/` inside the tree, which the install
first empties (head cannot plant a module there), and is shown read-only to
the runs. Where the backend keeps layers, what go.sum pins comes from a
layer instead (modules.py), fetched once per go.mod and go.sum. Each run builds in a cache of its own (GOCACHE under the run's
scratch), with no network (GOPROXY=off) and no other toolchain
(GOTOOLCHAIN=local).
"""

from __future__ import annotations

from types import MappingProxyType

from gatetui.config import Settings
from gatetui.git.snapshot import Snapshot
from gatetui.globs import under_any
from gatetui.stacks.base import RunPlugin, Stack
from gatetui.stacks.go.modules import MODULES
from gatetui.stacks.go.report import read_go_report
from gatetui.stacks.go.vet import vet_lint
from gatetui.stacks.order import Reorder
from gatetui.stacks.profile import Install, Layers, Profile, ReportFormat, Suite

ENVIRONMENT = ".gatetui-go"
# GOMODCACHE set: the modules' layer (modules.py), read-only, which holds everything go.sum pins.
# The build cache is in the workspace's own fresh home: vet, a command of its own, reuses what
# the build compiled there (a cache of its own would compile every dependency again).
GO_ENV = (
    f'export GOMODCACHE="${{GOMODCACHE:-$PWD/{ENVIRONMENT}/mod}}" GOCACHE="$HOME/.cache/go-build" '
    'GOPATH="$(mktemp -d)" GOFLAGS=-mod=readonly GOTOOLCHAIN=local'
)
INSTALL = f"rm -rf {ENVIRONMENT} && mkdir -p {ENVIRONMENT} && {GO_ENV} && go build ./..."
# vet's findings are judged against base's (vet.py), not failed on sight
VET = vet_lint(GO_ENV)
# Run 1 with random_order: go test cannot reorder a package's tests (`-run` selects, in source
# order), so each test (and example) runs alone in a process of its own, from one test binary
# per package: a test that needs one declared before it to have run fails there every time.
# A package whose binary does not build runs as go test runs it, to say why.
ALONE_SCRIPT = r"""alone() {
  bin=$(mktemp -d) code=0; : > "$report"
  for pkg in $(go list -e "$@"); do
    rm -f "$bin/t"; dir=$(go list -e -f '{{.Dir}}' "$pkg")
    if ! go test -c -o "$bin/t" "$pkg" >/dev/null 2>&1; then go test -json -count=1 "$pkg" >> "$report" || code=1; continue; fi
    [ -x "$bin/t" ] || continue
    for name in $(cd "$dir" && "$bin/t" -test.list '.*' | grep -E '^(Test|Example|Fuzz)[[:alnum:]_]*$'); do
      (cd "$dir" && go tool test2json -p "$pkg" -t "$bin/t" -test.v -test.paniconexit0 -test.run "^$name\$") >> "$report" || code=1
    done
  done
  return $code
}"""
ALONE = Reorder(RunPlugin(MappingProxyType({}), MappingProxyType({"GATE_GO_ALONE": "1"})), "each test alone")
# The gate's own script (in the environment, so nothing in the tree can
# shadow it): named test files (the hidden ones) run as their packages, the
# JSON goes to the report, and the tests' own output is shown as text.
TEST_SCRIPT = (
    r"""report=$1; shift
"""
    + ALONE_SCRIPT
    + r"""
[ $# -eq 0 ] && set -- ./...
for arg; do shift; case $arg in */*.go) set -- "$@" "./${arg%/*}";; *.go) set -- "$@" .;; *) set -- "$@" "$arg";; esac; done
if [ -n "$GATE_GO_ALONE" ]; then alone "$@"; status=$?; else go test -json -count=1 "$@" > "$report"; status=$?; fi
sed -n 's/.*"Output":"\(.*\)"}$/\1/p' "$report" | sed -e 's/\\n$//' -e 's/\\t/	/g' -e 's/\\"/"/g' -e 's/\\\\/\\/g'
exit $status
"""
)
TEST_ENV = {
    "GATE_GO_TEST": TEST_SCRIPT,
    "GOCACHE": "{scratch}/go-build",
    "GOPATH": "{scratch}/go",
    "GOMODCACHE": f"{{tree}}/{ENVIRONMENT}/mod",
    "GOFLAGS": "-mod=readonly",
    "GOTOOLCHAIN": "local",
    "GOPROXY": "off",
}
# Where vet runs as the lint (judged against base), `go test`'s own vet is off: its few
# analyzers (printf; since go 1.24 the tests analyzer, which names an Example of nothing)
# would fail a package base already has findings in, at base and head alike, in every run.
VET_OFF = {"GOFLAGS": "-mod=readonly -vet=off"}
SHUFFLE = RunPlugin(MappingProxyType({}), MappingProxyType({"GOFLAGS": "-shuffle={seed}"}))


def is_test_file(profile: Profile, path: str) -> bool:
    return path.endswith("_test.go") and (not profile.suite.paths or under_any(path, profile.suite.paths))


def go_profile(stack: Stack, base: Snapshot, settings: Settings) -> Profile:
    custom = settings.test is not None
    return Profile(
        stack=stack,
        install=Install(
            commands=settings.install or (INSTALL,),
            lint=None if settings.install else VET,
            tools=() if settings.install else (("go", "version"),),
            environment=settings.environment if settings.environment is not None else (ENVIRONMENT,),
            # object files the linker takes in as they are: code with no source to read
            unreadable_code=r"\.syso$",
            import_check=False,
        ),
        suite=Suite(
            runner="custom" if custom else "go",
            command=settings.test or 'sh -c "$GATE_GO_TEST" go-test {report}',
            env=dict(TEST_ENV) if settings.install else {**TEST_ENV, **VET_OFF},
            paths=settings.test_paths or (),
            sealed_by_default=("**/*_test.go", "**/testdata/**"),
            shuffle=None if custom else SHUFFLE,
            reorder=None if custom else ALONE,
        ),
        reports=ReportFormat(read=None if custom else read_go_report),
        layers=Layers(lock=None if settings.install else MODULES),
    )
