"""The node stack's profile: `npm ci`, then vitest or `node --test` as
package.json's test script names them, each made to write JUnit.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from types import MappingProxyType

from gatetui.config import ConfigError, Settings
from gatetui.git.snapshot import Snapshot
from gatetui.globs import under_any
from gatetui.stacks.base import RunPlugin, Stack
from gatetui.stacks.node import install, modules
from gatetui.stacks.node.report import check_node_report
from gatetui.stacks.order import Reorder
from gatetui.stacks.profile import Install, Layers, Profile, ReportFormat, Suite

NODE_TEST_DIRS = ("test", "tests", "__tests__")
JS_EXT = r"\.(?:[cm]?js|jsx|[cm]?ts|tsx)$"
DEFAULT_SECTIONS = ("package.json#scripts.test",)
# vitest's own files at the root, base's or not: one head adds (a config that aliases the
# library to another module, a setup file that mocks it) would apply to base's tests too
RUNNER_CONFIGS = ("vitest.*", "vite.config.*")

# Run 1 with random_order under node's own runner: a module every test process preloads
# (NODE_OPTIONS reaches the processes `node --test` starts) registers each file's tests
# last to first. vitest has no reverse: its runs keep their order.
REVERSE = Reorder(
    RunPlugin(
        MappingProxyType({"gatetui_reverse_order.cjs": (Path(__file__).parent / "reverse_order.cjs").read_bytes()}),
        MappingProxyType({"NODE_OPTIONS": "--require {folder}/gatetui_reverse_order.cjs"}),
    ),
    "reverse order",
)


def is_test_file(profile: Profile, path: str) -> bool:
    """A JS/TS file named `*.test.*`/`*.spec.*` or under a test path."""
    name = path.rsplit("/", 1)[-1]
    if not re.search(JS_EXT, name):
        return False
    return bool(re.search(r"\.(test|spec)\.", name)) or under_any(path, profile.suite.paths)


def node_profile(stack: Stack, base: Snapshot, settings: Settings) -> Profile:
    script = node_test_script(base)
    runner, test = node_test_command(script, settings.test, loads_config_in_place(base))
    test_paths = settings.test_paths or tuple(d for d in NODE_TEST_DIRS if base.has_dir(d))
    configs = [p for p in base.paths if re.match(r"(vitest|vite)\.config\.[cm]?[jt]s$", p)]
    environment = settings.environment if settings.environment is not None else ("node_modules",)
    return Profile(
        stack=stack,
        # a custom install is the project's own: run as given, its environment unchecked (README)
        install=Install(
            commands=settings.install or install.steps(any(base.text(lock) is not None for lock in install.LOCKS)),
            env={} if settings.install else {**install.STEPS_ENV, **install.LIFECYCLE_ENV},
            own=None if settings.install else install.own_install(environment),
            tools=() if settings.install else (("npm", "--version"), ("node", "--version")),
            environment=environment,
            import_check=False,
        ),
        suite=Suite(
            runner=runner,
            command=test,
            paths=test_paths,
            sealed_by_default=tuple(
                dict.fromkeys(
                    [*(f"{p}/**" for p in test_paths), "**/*.test.*", "**/*.spec.*", *configs, *RUNNER_CONFIGS]
                )
            ),
            reorder=REVERSE if runner == "node" else None,
        ),
        reports=ReportFormat(ids="node-or-vitest" if runner == "custom" else runner, check=check_node_report),
        layers=Layers(lock=None if settings.install else modules.MODULES),
    )


def node_test_script(base: Snapshot) -> str:
    text = base.text("package.json") or "{}"
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as err:
        raise ConfigError(f"package.json at base {base.sha[:7]} is not valid JSON ({err})") from None
    scripts = manifest.get("scripts") if isinstance(manifest, dict) else None
    test = scripts.get("test") if isinstance(scripts, dict) else None
    return test if isinstance(test, str) else ""


def loads_config_in_place(base: Snapshot) -> bool:
    """Whether base's vitest can load its config without writing it out
    first (`--configLoader runner`, vitest 3.1 and later). Vite otherwise
    writes the bundled config under node_modules/.vite-temp, which the runs
    see read-only: every config would fail to load."""
    try:
        lock = json.loads(base.text("package-lock.json") or "{}")
        version = str(lock["packages"]["node_modules/vitest"]["version"])
        major, minor = (int(part) for part in version.split(".")[:2])
    except (ValueError, KeyError, TypeError, AttributeError):
        return False
    return (major, minor) >= (3, 1)


def node_test_command(script: str, configured: str | None, in_place: bool = False) -> tuple[str, str]:
    """The runner and the command that makes it write JUnit to {report}
    (`in_place`: vitest loads its config without writing it to disk)."""
    if configured:
        return "custom", configured
    words = shlex.split(script) if script else []
    if words[:1] == ["vitest"]:
        # the installed binary itself: npx would read head's .npmrc, whose
        # node-options would load head's code into the runner's process
        args = [w for w in words[1:] if w not in ("run", "--run", "--watch")]
        loader = ["--configLoader", "runner"] if in_place else []
        return "vitest", shlex.join(
            ["node_modules/.bin/vitest", "run", *args, *loader, "--reporter=default", "--reporter=junit"]
        ) + " --outputFile.junit={report}"
    if words[:2] == ["node", "--test"]:
        reporters = shlex.join(
            ["node", "--test", "--test-reporter=spec", "--test-reporter-destination=stdout", "--test-reporter=junit"]
        )
        return "node", f"{reporters} --test-reporter-destination={{report}} {shlex.join(words[2:])}".strip()
    raise ConfigError(
        f"package.json's scripts.test ({script or 'missing'}) runs neither vitest nor node --test; "
        "set test in gatetui.toml to a command that writes JUnit XML to {report}"
    )
