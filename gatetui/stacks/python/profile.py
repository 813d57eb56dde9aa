"""The python stack's profile: a fresh venv, head's project built alone,
its test dependencies pinned in a step of their own, pytest with the gate's
safe path and bytecode settings, JUnit by pytest's own writer.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType

from gatetui.config import Settings, parse_toml
from gatetui.git.snapshot import Snapshot
from gatetui.stacks.base import BuildCheck, Dependencies, EnvironmentCheck, GateScript, RunPlugin, Stack
from gatetui.stacks.build_tools import DeclaredResolve
from gatetui.stacks.offered import Offered
from gatetui.stacks.order import Reorder
from gatetui.stacks.profile import ChangedLines, Install, Layers, Profile, ReportFormat, Suite
from gatetui.stacks.python import lock_report, pip_report, scripts, wheel_tree
from gatetui.stacks.python.coverage_lines import PYTHON_COVERAGE
from gatetui.stacks.python.declared import declared_metadata
from gatetui.stacks.python.extras import declared_extras
from gatetui.stacks.python.hooks import pytest_plugins
from gatetui.stacks.python.input_search import PYTHON_SEARCH
from gatetui.stacks.python.installer import PINNED_CACHE, PIP_INTO, Installer
from gatetui.stacks.python.layer import default_installer, python_layer
from gatetui.stacks.python.mutant_import import in_memory
from gatetui.stacks.python.mutants import mutate
from gatetui.stacks.python.plugins_loaded import python_loads
from gatetui.stacks.python.project_config import (
    TEST_EXTRAS,
    dependency_group_requirements,
    pytest_ini_text,
    pytest_settings,
    test_requirement_files,
    test_sets,
    tox_deps,
)
from gatetui.stacks.python.support import test_support
from gatetui.stacks.python.tools_layer import python_build_tools, wheel_command
from gatetui.stacks.python.twins import twin
from gatetui.stacks.python.version_file import rendered, version_files

# The machine's pip installs into the fresh venv: a venv without its own pip
# is as fresh and five seconds faster to make (no ensurepip). uv installs
# and resolves instead where it is found (installer.py).
PIP = PIP_INTO.format(venv=".venv")
SCM_BACKENDS = re.compile(r"setuptools[_-]scm|hatch-vcs|versioningit|pdm-backend|flit[_-]scm")
SKIP_TOP_DIRS = {"tests", "test", "docs", "doc", "examples", "benchmarks", "scripts", "build"}
# Sections of shared files sealed by default: the settings that decide which
# tests run, without the rest of the file (a version bump is no change).
DEFAULT_SECTIONS = ("pyproject.toml#tool.pytest.ini_options", "setup.cfg#tool:pytest", "tox.ini#pytest")
SEALED_INI = ".base-pytest.ini"  # base's runner settings in the old tests' run: a name that is no sign of the gate
HERE = Path(__file__).parent

# compat: an editable install is a path in a .pth, not setuptools' import
# hook (code at every interpreter start, which the environment check refuses)
EDITABLE = "--config-settings editable_mode=compat"
RESOLVE = f"--dry-run --report {{report}} {EDITABLE}"
# uv's resolve starts from head's installed metadata packed as a wheel (own_stub.py);
# either resolve reads the requirements with head's project left out (own_requirements.py)
RESOLVE_ENV = MappingProxyType(
    {"GATE_OWN_STUB": (HERE / "own_stub.py").read_text(), "GATE_OWN_REQS": (HERE / "own_requirements.py").read_text()}
)

# Every Python process of a test run: nothing is imported from the tree's
# root before the runner (a pytest.py there would be the runner, hidden tests
# included), so the root goes to the end of sys.path, where `python -m pytest`
# would have put it first; bytecode is read and written only under a folder
# no one could plant in ({bytecode}: made for the command, read-only to it
# where runs are isolated, holding the layer's own), never a __pycache__.
# pip is there for the installs that fall back to it: importable is enough
# to say so (`pip --version` loads its whole CLI, a quarter second of the
# first gate of every `gatetui check`, and of each Runtime sandbox's start).
PIP_THERE = ("python3", "-I", "-c", "import pip")
SAFE_PYTHON_ENV = {"PYTHONSAFEPATH": "1", "PYTHONPATH": "{gate}", "PYTHONPYCACHEPREFIX": "{bytecode}"}
SAFE_PYTHON_FILES = MappingProxyType(
    {
        "sitecustomize.py": (
            b'"""Written by the gate: the tree\'s root last on sys.path (PYTHONSAFEPATH keeps it off)."""\n'
            b"import os\nimport sys\n\nif os.getcwd() not in sys.path:\n    sys.path.append(os.getcwd())\n"
        )
    }
)


def python_profile(stack: Stack, base: Snapshot, settings: Settings) -> Profile:
    custom = settings.test is not None
    installer = None if settings.install else default_installer()
    return Profile(
        stack=stack,
        install=install_of(base, settings, installer),
        suite=suite_of(base, settings),
        reports=ReportFormat(ids="pytest"),  # a custom command's pytest still writes the report (PYTEST_ADDOPTS)
        lines=ChangedLines(
            coverage=None if custom else PYTHON_COVERAGE,
            mutate=mutate,  # head's source is read with ast, whatever command runs its tests
            mutant_import=None if custom else in_memory,  # loaded by a pytest plugin: its file stays head's
            mutant_search=None if custom else PYTHON_SEARCH,  # calls recorded by a pytest plugin
            twin=twin,  # read with ast, like the mutants
        ),
        layers=Layers(
            build_tools=None
            if installer is None
            else python_build_tools(installer, python_install(base, installer)[1], EDITABLE)
        ),
    )


def install_of(base: Snapshot, settings: Settings, installer: Installer | None) -> Install:
    environment = settings.environment if settings.environment is not None else (".venv",)
    return Install(
        commands=settings.install or python_install(base, installer),
        env=scm_version_env(base),
        tag_version=scm_version if scm_version_env(base) else None,
        generated=rendered(version_files(base)),
        dependencies=None if settings.install else python_dependencies(base, installer),
        tools=() if settings.install else (PIP_THERE,),
        environment=environment,
        environment_check=python_environment_check(environment, python_loads(pytest_plugins(base), environment)),
        import_command=PYTHON_IMPORT_CHECK,
        build_check=python_wheel(installer) if installer is not None and settings.wheel_check else None,
        build_generated=build_generated(base),
        unreadable_code=r"^(?:.*/)?(?!__pycache__/)[^/]+/[^/]+\.py[co]$|^[^/]+\.py[co]$",
    )


def suite_of(base: Snapshot, settings: Settings) -> Suite:
    paths = settings.test_paths or python_test_paths(base)
    globs = python_test_globs(paths, pytest_settings(base).get("python_files"))
    custom = settings.test is not None
    return Suite(
        runner="custom" if custom else "pytest",
        command=settings.test or ".venv/bin/python -m pytest",
        # a file that fails to collect is reported as such, and the other files' tests still run
        env={
            "PYTEST_ADDOPTS": "-p no:cacheprovider -o junit_family=xunit1 --junitxml={report} "
            "--continue-on-collection-errors",
            **SAFE_PYTHON_ENV,
        },
        files=SAFE_PYTHON_FILES,
        paths=paths,
        globs=globs,
        cannot_start=() if custom else (3, 4),  # pytest: internal error, usage error
        plugin_options=PYTEST_PLUGIN_OPTIONS,
        start_fix=(
            "add the plugin to the test dependencies (an extra such as [project.optional-dependencies] "
            "test) or drop the option from addopts ([tool.pytest.ini_options]), or set `test` in "
            "[tool.gatetui]"
        ),
        # every module a test file's name marks, wherever it is (the diff rules leave test files
        # alone), and the helpers base's tests load from beside them (support.py)
        sealed_by_default=tuple(
            dict.fromkeys(
                [
                    *globs,
                    "**/conftest.py",
                    *(f"**/{n}" for n in PYTEST_FILES),
                    *test_support(base, globs),
                    "pytest.ini",
                    ".pytest.ini",
                ]
            )
        ),
        old_tests_files={} if custom else {SEALED_INI: pytest_ini_text(pytest_settings(base)).encode()},
        old_tests_env={} if custom else {"PYTEST_ADDOPTS": f"-c {SEALED_INI} --rootdir=."},
        shuffle=None if custom else SHUFFLE,
        reorder=None if custom else REVERSE,
        rerun=None if custom else RERUN,
    )


# The random-order run: a small pytest plugin (pytest_random_order.py) that
# shuffles the collected tests with the seed the plan drew.
SHUFFLE = RunPlugin(
    MappingProxyType({"gatetui_random_order.py": (HERE / "pytest_random_order.py").read_bytes()}),
    MappingProxyType(
        {"PYTEST_ADDOPTS": "-p gatetui_random_order", "PYTHONPATH": "{folder}", "GATETUI_RANDOM_SEED": "{seed}"}
    ),
)
# Run 1 with random_order: every test in reverse order (pytest_reverse_order.py).
REVERSE = Reorder(
    RunPlugin(
        MappingProxyType({"gatetui_reverse_order.py": (HERE / "pytest_reverse_order.py").read_bytes()}),
        MappingProxyType({"PYTEST_ADDOPTS": "-p gatetui_reverse_order", "PYTHONPATH": "{folder}"}),
    ),
    "reverse order",
)
# The reruns of head's changed tests in one process (pytest_rerun.py makes each a case of its own),
# and the fresh process that repeats one of them, its last case with its module loaded afresh.
RERUN = RunPlugin(
    MappingProxyType({"gatetui_rerun.py": (HERE / "pytest_rerun.py").read_bytes()}),
    MappingProxyType(
        {
            "PYTEST_ADDOPTS": "-p gatetui_rerun",
            "PYTHONPATH": "{folder}",
            "GATETUI_RERUNS": "{reruns}",
            "GATETUI_RERUN_AFRESH": "{afresh}",
            "GATETUI_RERUN_ONLY": "{only}",
        }
    ),
)


def python_wheel(installer: Installer) -> BuildCheck:
    """Head's wheel, built from a copy of the tree taken before the install
    starts (its build leaves nothing in the tree the install uses, nor sees
    what the install writes there) with head's declared build backend, by uv
    (`uv build`) where the install uses uv, else the machine's pip."""
    return BuildCheck(
        "tar -cf {source} --exclude=./.venv .",
        wheel_command(installer.wheel("$src", "$out")),
        wheel_tree.REPORT,
        "head's wheel",
        wheel_tree.wheel_findings,
        wheel_tree.describe,
    )


def build_generated(base: Snapshot) -> tuple[str, ...]:
    """The version files version-from-git builds write into the tree."""
    return tuple(file.path for file in version_files(base))


# Head's packages imported with only their runtime dependencies in sight
# (import_check.py), bytecode read and written under a fresh prefix as in
# the runs (where the layer's own is shown: -I ignores PYTHONPYCACHEPREFIX).
PYTHON_IMPORT_CHECK = GateScript(
    '.venv/bin/python -I -X pycache_prefix={bytecode} -c "$GATE_IMPORT_CHECK" {modules}',
    MappingProxyType({"GATE_IMPORT_CHECK": (HERE / "import_check.py").read_text()}),
)


def python_environment_check(
    environment: tuple[str, ...], loads: Callable[[Offered], RunPlugin] | None = None
) -> EnvironmentCheck:
    """Each venv among the environment folders against its RECORDs (see
    env_check.py), with the machine's interpreter in isolated mode:
    nothing of the venv is loaded to check it; the runs load the plugins
    it verified (plugins_loaded.py)."""
    command = f'python3 -I -S -c "$GATE_ENV_CHECK" {{report}} {{mode}} {shlex.join(environment)}'
    return EnvironmentCheck(command, MappingProxyType({"GATE_ENV_CHECK": scripts.ENV_CHECK}), loads)


# Options pytest plugins add, that a project's addopts often name: which
# distribution brings each (the runner's usage error names only the option).
PYTEST_PLUGIN_OPTIONS = MappingProxyType(
    {
        "--cov": "pytest-cov",
        "--cov-report": "pytest-cov",
        "--no-cov": "pytest-cov",
        "--cov-fail-under": "pytest-cov",
        "-n": "pytest-xdist",
        "--numprocesses": "pytest-xdist",
        "--dist": "pytest-xdist",
        "--timeout": "pytest-timeout",
        "--reruns": "pytest-rerunfailures",
        "--benchmark-skip": "pytest-benchmark",
        "--benchmark-disable": "pytest-benchmark",
        "--asyncio-mode": "pytest-asyncio",
        "--mypy": "pytest-mypy",
        "--html": "pytest-html",
        "--snapshot-update": "syrupy",
        "--doctest-plus": "pytest-doctestplus",
        "--mpl": "pytest-mpl",
        "--randomly-seed": "pytest-randomly",
        "--hypothesis-profile": "hypothesis",
        "--django-settings-module": "pytest-django",
        "--ds": "pytest-django",
        "--flake8": "pytest-flake8",
    }
)

# A test path named as a folder of tests is one whole; any other holds library
# code beside its tests (a package, `src`, the root).
TEST_FOLDER = re.compile(r"^(?:tests?|testing|specs?)$|^tests?_|_tests?$")
PYTEST_FILES = ("test_*.py", "*_test.py")  # pytest's python_files default


def python_test_globs(test_paths: tuple[str, ...], python_files: object = None) -> tuple[str, ...]:
    """Where base's runner finds its tests, never a library module: a test
    path named as a test folder (`tests`, `integration_tests`) whole; in any
    other, the modules pytest's `python_files` patterns name and the folders
    named `tests` or `test` inside it. So a package that keeps its tests in
    `pkg/tests/` (testpaths = ["pkg"]) seals those, not `pkg/core.py`."""
    patterns = (
        python_files.split()
        if isinstance(python_files, str)
        else [str(p) for p in python_files]
        if isinstance(python_files, list)
        else list(PYTEST_FILES)
    )
    globs: list[str] = []
    for path in test_paths:
        folder = path.strip("/")
        if folder in ("", "."):
            prefix = ""
        elif TEST_FOLDER.search(folder.rsplit("/", 1)[-1]):
            globs.append(f"{folder}/**")
            continue
        else:
            prefix = f"{folder}/"
        globs += [f"{prefix}**/{pattern}" for pattern in patterns]
        globs += [f"{prefix}**/tests/**", f"{prefix}**/test/**"]
    return tuple(dict.fromkeys(globs))


def python_test_paths(base: Snapshot) -> tuple[str, ...]:
    declared = pytest_settings(base).get("testpaths")
    if isinstance(declared, str) and declared.split():
        return tuple(declared.split())
    if isinstance(declared, (list, tuple)) and declared:
        return tuple(str(path) for path in declared)
    return tuple(d for d in ("tests", "test") if base.has_dir(d)) or (".",)


def python_install(base: Snapshot, installer: Installer | None = None) -> tuple[str, ...]:
    """A fresh venv and the project itself, without its dependencies: head's
    build runs here, before any third-party distribution is installed (see
    python_dependencies for the rest)."""
    installer = installer or default_installer()
    return ("python3 -m venv --without-pip .venv", installer.install(".venv", f"--no-deps {EDITABLE} -e ."))


def python_dependencies(base: Snapshot, installer: Installer | None = None) -> Dependencies:
    """The project's test extras (resolved from the installed project's own
    metadata, {own}: no second build of head), then the rest of its declared
    test dependencies; pytest only when none declares it."""
    project = (parse_toml(base, "pyproject.toml") or {}).get("project", {})
    optional = declared_extras(base, project if isinstance(project, dict) else {})
    extras = test_sets({e: [r for r in optional[e] if isinstance(r, str)] for e in TEST_EXTRAS if e in optional})
    target = f"{{own}}[{','.join(extras)}]" if extras else "{own}"
    reqs = test_requirement_files(base)
    groups = dependency_group_requirements(base)
    tox = tox_deps(base)
    declared = [r for extra in extras for r in optional[extra]]
    declared += groups + tox + [line for f in reqs for line in (base.text(f) or "").splitlines()]
    lines = [target, *groups, *tox]
    if not any(re.match(r"\s*pytest\s*($|[<>=!~;\[ ])", d) for d in declared if isinstance(d, str)):
        lines.append("pytest")
    installer = installer or default_installer()
    return Dependencies(
        resolve=installer.resolve(".venv", f"{PIP} {RESOLVE}", lines, reqs),
        resolve_env=RESOLVE_ENV,
        local=installer.install(".venv", f"--no-deps {EDITABLE} {{local}}"),
        pinned=installer.install(
            ".venv", "--no-deps --require-hashes -r /dev/stdin", pip_prefix=PINNED_CACHE + " ", fresh_cache=True
        ),
        own_name=pip_report.NAME,
        read=lock_report.read,
        local_command=lambda command, resolved: command.replace("{local}", pip_report.local_args(resolved)),
        pinned_command=lambda command, resolved: pip_report.heredoc(command, resolved.pinned),
        layer=python_layer(installer),
        declared=DeclaredResolve(
            ("pyproject.toml",),
            declared_metadata,
            installer.resolve_declared(lines, reqs),
            "GATE_OWN_METADATA",
            pip_report.canonical,
        ),
    )


def scm_version_env(base: Snapshot) -> dict[str, str]:
    """A version for builds that read it from git: the exported tree has no
    .git, so setuptools-scm (and hatch-vcs on top of it) would fail there."""
    build = (parse_toml(base, "pyproject.toml") or {}).get("build-system") or {}
    declared = " ".join(str(r) for r in build.get("requires") or [])
    declared += " " + (base.text("setup.py") or "")[:20000]
    if not SCM_BACKENDS.search(declared):
        return {}
    return {"SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0", "PDM_BUILD_SCM_VERSION": "0.0.0"}


def scm_version(tag: str | None) -> str:
    """A version after the nearest tag (1.5.0 -> 1.5.0.post0), so that
    packages depending on this one still accept it; 0.0.0 without a tag."""
    match = re.match(r"^[vV]?(\d+(?:\.\d+)*)", tag or "")
    return f"{match.group(1)}.post0" if match else "0.0.0"


def importable_packages(paths: tuple[str, ...]) -> list[str]:
    """Top-level packages of a tree (flat or src layout) an install must make importable."""
    found: set[str] = set()
    for path in paths:
        parts = path.split("/")
        if parts[0] == "src" and len(parts) == 3 and parts[2] == "__init__.py":
            found.add(parts[1])
        elif len(parts) == 2 and parts[1] == "__init__.py" and parts[0] not in SKIP_TOP_DIRS:
            found.add(parts[0])
    return sorted(p for p in found if p.isidentifier())
