"""The profile a stack builds from base: what it can do for one project,
grouped by what each capability is about (installing, running the suite,
reading its reports, measuring the changed lines, the layers kept between
gates). Every group has defaults that mean "not here", so a stack declares
only what it has; the gate reads the declared fields and never guesses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gatetui.stacks.base import (
    BuildCheck,
    Dependencies,
    EnvironmentCheck,
    GateScript,
    LineCoverage,
    LockLayer,
    OwnInstall,
    RunPlugin,
    RunTree,
    Stack,
)
from gatetui.stacks.mutation import Mutant, Mutate, Twin

if TYPE_CHECKING:
    from gatetui.stacks.build_tools import BuildTools
    from gatetui.stacks.lint import Lint
    from gatetui.stacks.mutant_search import MutantSearch
    from gatetui.stacks.order import Reorder
    from gatetui.stacks.results import Report


@dataclass(frozen=True)
class Install:
    """How head installs from scratch, and what the install check makes
    sure of beside it."""

    commands: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    # Builds that read their version from git get one made from head's
    # nearest tag (the exported tree has no .git): every `env` value.
    tag_version: Callable[[str | None], str] | None = None
    # version -> what the build writes into the tree by design, as the gate writes it into each export
    generated: Callable[[str], Mapping[str, bytes]] | None = None
    tools: tuple[tuple[str, ...], ...] = ()  # commands that must work before the gate starts
    dependencies: Dependencies | None = None
    own: OwnInstall | None = None  # head's own install code, run where it cannot change the environment
    # What the install hands on to the test runs, read-only: top-level folders
    # of the installed tree. Every run gets a fresh export of head otherwise.
    environment: tuple[str, ...] = ()
    environment_check: EnvironmentCheck | None = None
    import_check: bool = True  # the stack can import head's packages after the install
    # How head's packages are imported for the install check ({modules}; {bytecode}: the command's
    # own bytecode folder, as the runs'), with what environment.
    import_command: GateScript | None = None
    # Head's distributable compared with its tree, and the tree paths a build writes by design
    # (a version file), which the distributable may hold.
    build_check: BuildCheck | None = None
    build_generated: tuple[str, ...] = ()
    lint: Lint | None = None  # a static check the install runs, judged against base's findings
    # Files the stack would run without their source (a sourceless .pyc): head may not add or change one.
    unreadable_code: str = ""


@dataclass(frozen=True)
class Suite:
    """How the test suite runs: the command, where its tests live, what
    the gate writes into each run, and how the runner is ordered."""

    runner: str  # "pytest", "vitest", "node", "go", or "custom"
    command: str  # writes its report to {report}
    env: dict[str, str] = field(default_factory=dict)
    paths: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()  # python: where in `paths` test modules live (python_test_globs)
    # Files the gate writes into every test run's tree before it starts, under
    # a folder named per run ({gate} in `env` is that folder's path).
    files: Mapping[str, bytes] = field(default_factory=dict)
    # globs of whole files the stack seals by default: its test files and runner settings (Policy.rules)
    sealed_by_default: tuple[str, ...] = ()
    # The runner's exit codes for "could not start" (a usage error: nothing judged), the plugin that
    # provides an option the settings may name, and where the settings that fix it live.
    cannot_start: tuple[int, ...] = ()
    plugin_options: Mapping[str, str] = field(default_factory=dict)
    start_fix: str = "fix the test command's settings"
    # Base's runner settings for the run of base's tests over head (files
    # written into that copy, and the environment that loads them).
    old_tests_files: Mapping[str, bytes] = field(default_factory=dict)
    old_tests_env: Mapping[str, str] = field(default_factory=dict)
    shuffle: RunPlugin | None = None  # how the random-order run shuffles; None: this runner cannot
    reorder: Reorder | None = None  # run 1 with random_order: reversed, or each test alone (stacks/order.py)
    rerun: RunPlugin | None = None  # head's changed tests again in one process (gate/judging/fresh.py); None: not here


@dataclass(frozen=True)
class ReportFormat:
    """How a run's report is read: JUnit XML by the gate, unless the stack
    reads its own format."""

    read: Callable[[bytes, str, RunTree], Report] | None = None  # None: JUnit XML, read by the gate
    ids: str = "junit"  # for JUnit: the id rule of the runner that writes it (gate/reports/test_ids.py)
    # For JUnit: the shape the runner always gives its report, checked against the tree the run
    # ran; what it lacks is added to the report as findings (Report.findings). None: no check.
    check: Callable[[Report, RunTree], Report] | None = None


@dataclass(frozen=True)
class ChangedLines:
    """What the stack measures of head's changed lines, for `covered` and `bites`."""

    coverage: LineCoverage | None = None  # which test runs which line; None: not here
    # The mutants of a file's changed lines (stacks/mutation.py); None: not available here.
    mutate: Mutate | None = None
    mutant_import: Callable[[Mutant], RunPlugin] | None = None  # a mutant run from memory; None: written in the tree
    mutant_search: MutantSearch | None = None  # inputs that tell a survivor apart; None: survivors stay as found
    twin: Twin | None = None  # bites' control: head's code read differently (stacks/mutation.py); None: head's text


@dataclass(frozen=True)
class Layers:
    """Dependency layers kept between gates, in place of work each gate would redo."""

    lock: LockLayer | None = None  # what a lock file pins
    build_tools: BuildTools | None = None  # what head's build imports


@dataclass(frozen=True)
class Profile:
    """What a stack can do for one project, read from base: how it installs,
    runs, reports, measures the changed lines and layers its dependencies,
    and which files hold its tests. How strictly a change is judged is
    base's policy, a record apart (gatetui/policy.py): no profile copies a
    setting of it."""

    stack: Stack
    install: Install
    suite: Suite
    reports: ReportFormat = field(default_factory=ReportFormat)
    lines: ChangedLines = field(default_factory=ChangedLines)
    layers: Layers = field(default_factory=Layers)

    def is_test_file(self, path: str) -> bool:
        """Whether a path holds test definitions the scanner should count."""
        return self.stack.test_file(self, path)
