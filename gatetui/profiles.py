"""Stack profiles: how one ecosystem installs, runs its tests and reports.

A profile is built from the base commit (see config.py): the install
command, the test command, the test paths and the sealed set. The commands
are shell text run inside a workspace; `{report}` stands for the path where
the run's JUnit XML must be written.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from gatetui.config import (
    DEFAULT_RULE, ConfigError, SealRule, SealSettings, Settings, load_settings, parse_toml,
)
from gatetui.errors import BadInput
from gatetui.extras import declared_extras
from gatetui.globs import matches
from gatetui.snapshot import Snapshot

# The machine's pip installs into the fresh venv: a venv without its own pip
# is as fresh and five seconds faster to make (no ensurepip).
PIP = "python3 -m pip --python .venv/bin/python install --disable-pip-version-check --no-input --progress-bar off"
TEST_EXTRAS = ("test", "tests", "testing", "dev")
PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg")
NODE_TEST_DIRS = ("test", "tests", "__tests__")
JS_EXT = r"\.(?:[cm]?js|jsx|[cm]?ts|tsx)$"
TOX_FACTOR = re.compile(r"^!?[\w.-]+(?:[,-]!?[\w.-]+)*\s*:\s")
SCM_BACKENDS = re.compile(r"setuptools[_-]scm|hatch-vcs|versioningit|pdm-backend|flit[_-]scm")
SKIP_TOP_DIRS = {"tests", "test", "docs", "doc", "examples", "benchmarks", "scripts", "build"}
# Sections of shared files sealed by default: the settings that decide which
# tests run, without the rest of the file (a version bump is no change).
DEFAULT_SECTIONS = {
    "python": ("pyproject.toml#tool.pytest.ini_options", "setup.cfg#tool:pytest", "tox.ini#pytest"),
    "node": ("package.json#scripts.test",),
}


@dataclass(frozen=True)
class GateScript:
    """A script of the gate's own, passed in `env` and run by `command` in a
    sandbox (so nothing of it lives in the tree head could shadow)."""

    command: str
    env: Mapping[str, str]


@dataclass(frozen=True)
class EnvironmentCheck:
    """A command the gate runs after the install and before any test run:
    it writes {"problems": [...], "summary": "..."} as JSON to {report}, and
    a summary that is not empty fails the install with it."""

    command: str
    env: Mapping[str, str]


@dataclass(frozen=True)
class Dependencies:
    """Third-party dependencies in a step of their own, where no code of
    head's runs (see gate/install.py). The install commands install head's
    own project without its dependencies; `resolve` writes pip's
    installation report to {report} from the installed project's metadata
    ({own}: its name); `local` installs what else lives in the tree ({local}:
    pip arguments), and `pinned` the index's distributions (lines on stdin)."""

    resolve: str
    local: str
    pinned: str


@dataclass(frozen=True)
class Profile:
    stack: str
    runner: str  # "pytest", "vitest", "node", or "custom"
    install: tuple[str, ...]
    test: str
    test_env: dict[str, str] = field(default_factory=dict)
    install_env: dict[str, str] = field(default_factory=dict)
    test_paths: tuple[str, ...] = ()
    test_globs: tuple[str, ...] = ()  # python: where in test_paths test modules live (python_test_globs)
    # The runner's exit codes for "could not start" (a usage error: nothing judged), the plugin that
    # provides an option the settings may name, and where the settings that fix it live.
    cannot_start: tuple[int, ...] = ()
    plugin_options: Mapping[str, str] = field(default_factory=dict)
    start_fix: str = "fix the test command's settings"
    sealed: tuple[str, ...] = ()  # globs of whole files put back by old_tests
    timeout: float = 900.0
    import_check: bool = True
    # How head's packages are imported for the install check ({modules}), with what environment.
    import_command: GateScript | None = None
    # How the install check builds head's wheel into {report}, beside the install, in a copy of the
    # tree; and the tree paths a build writes by design (a version file), which the wheel may hold.
    wheel_command: str | None = None
    build_generated: tuple[str, ...] = ()
    on_old_tests_fail: str = "review"
    hidden: str | None = None
    random_order: bool = False
    baseline: bool = False
    test_network: bool = False  # from base's config: test runs may reach the network
    rules: tuple[SealRule, ...] = ()  # the sealing rules; `sealed` is their restore set
    tools: tuple[tuple[str, ...], ...] = ()  # commands that must work before the gate starts
    # Files the gate writes into every test run's tree before it starts, under
    # a folder named per run ({gate} in test_env is that folder's path).
    test_files: Mapping[str, bytes] = field(default_factory=dict)
    # What the install hands on to the test runs, read-only: top-level folders
    # of the installed tree. Every run gets a fresh export of head otherwise.
    environment: tuple[str, ...] = ()
    environment_check: EnvironmentCheck | None = None
    dependencies: Dependencies | None = None
    # Files the stack would run without their source (a sourceless .pyc):
    # head may not add or change one, since no rule can read it.
    unreadable_code: str = ""

    def is_test_file(self, path: str) -> bool:
        """Whether a path holds test definitions the scanner should count."""
        name = path.rsplit("/", 1)[-1]
        if self.stack == "python":
            return path.endswith(".py") and (
                name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
                or matches(path, self.test_globs)
            )
        if not re.search(JS_EXT, name):
            return False
        return bool(re.search(r"\.(test|spec)\.", name)) or under_any(path, self.test_paths)


def under_any(path: str, folders: tuple[str, ...]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders if f != ".")


def detect_stack(base: Snapshot, settings: Settings) -> str:
    if settings.stack:
        return settings.stack
    if "package.json" in base and not {"pyproject.toml", "setup.py", "setup.cfg"} & set(base.paths):
        return "node"
    if {"pyproject.toml", "setup.py", "setup.cfg"} & set(base.paths):
        return "python"
    if "package.json" in base:
        return "node"
    raise BadInput(
        f"no stack detected at base {base.sha[:7]}: no pyproject.toml, setup.py, setup.cfg "
        "or package.json at the top; set stack in gatetui.toml"
    )


def load_profile(base: Snapshot, seal: SealSettings | None = None) -> Profile:
    """The profile that judges a change, from the base commit alone.

    `seal` replaces base's own sealing (its seal table and `sealed`): the
    lab tries rules on a scenario without editing it."""
    settings = load_settings(base)
    if seal is not None:
        settings = replace(settings, seal=seal, sealed=(),
                           hidden=seal.hidden if seal.hidden is not None else settings.hidden,
                           random_order=settings.random_order if seal.random_order is None else seal.random_order,
                           baseline=settings.baseline if seal.baseline is None else seal.baseline)
    stack = detect_stack(base, settings)
    profile = python_profile(base, settings) if stack == "python" else node_profile(base, settings)
    profile = with_rules(profile, settings)
    if not any(profile.is_test_file(p) for p in base.paths):
        where = ", ".join(profile.test_paths) or "the repository"
        raise BadInput(
            f"no tests found at base {base.sha[:7]} under {where}: nothing to judge a change by; "
            "set test_paths in [tool.gatetui]"
        )
    return profile


def with_rules(profile: Profile, settings: Settings) -> Profile:
    """The rules that judge sealed paths: the default rule (the stack's
    sealed set, or the seal table's `paths`, plus `sealed`), then the named
    ones. old_tests restores every glob of a rule that is not `allow`."""
    seal = settings.seal
    default = seal.paths if seal.paths is not None else (*profile.sealed, *DEFAULT_SECTIONS[profile.stack])
    paths = tuple(dict.fromkeys([*default, *settings.sealed]))
    rules = ((SealRule(DEFAULT_RULE, paths, seal.on_change, seal.allow_new),) if paths else ()) + seal.rules
    sealed = tuple(dict.fromkeys(g for r in rules if r.on_change != "allow" for g in r.globs))
    return replace(profile, rules=rules, sealed=sealed, hidden=settings.hidden,
                   random_order=settings.random_order, baseline=settings.baseline,
                   test_network=settings.test_network)


# --- python -----------------------------------------------------------------

# compat: an editable install is a path in a .pth, not setuptools' import
# hook (code at every interpreter start, which the environment check refuses)
EDITABLE = "--config-settings editable_mode=compat"
RESOLVE = f"--dry-run --report {{report}} {EDITABLE}"
# The pinned step reuses what the resolve downloaded (pip checks every file
# against its pinned hash), never a wheel built in a step head's code ran in
# (pip's wheel cache is not checked), and reads no configuration from the
# home those steps could write (an index of head's choosing).
PINNED_CACHE = 'rm -rf "$HOME/.cache/pip/wheels"; PIP_CACHE_DIR="$HOME/.cache/pip" HOME="$(mktemp -d)" XDG_CONFIG_HOME='

# Every Python process of a test run: nothing is imported from the tree's
# root before the runner (a pytest.py there would be the runner, hidden tests
# included), so the root goes to the end of sys.path, where `python -m pytest`
# would have put it first; bytecode is read and written only under a folder
# no one could plant in before the run ({scratch}), never a __pycache__.
SAFE_PYTHON_ENV = {"PYTHONSAFEPATH": "1", "PYTHONPATH": "{gate}", "PYTHONPYCACHEPREFIX": "{scratch}"}
SAFE_PYTHON_FILES = MappingProxyType({"sitecustomize.py": (
    b'"""Written by the gate: the tree\'s root last on sys.path (PYTHONSAFEPATH keeps it off)."""\n'
    b"import os\nimport sys\n\nif os.getcwd() not in sys.path:\n    sys.path.append(os.getcwd())\n")})


def python_profile(base: Snapshot, settings: Settings) -> Profile:
    test_paths = settings.test_paths or python_test_paths(base)
    test_globs = python_test_globs(test_paths, pytest_settings(base).get("python_files"))
    environment = settings.environment if settings.environment is not None else (".venv",)
    custom = settings.test is not None
    return Profile(
        stack="python",
        runner="custom" if custom else "pytest",
        install=settings.install or python_install(base),
        dependencies=None if settings.install else python_dependencies(base),
        tools=() if settings.install else (("python3", "-m", "pip", "--version"),),
        environment=environment,
        environment_check=python_environment_check(environment),
        import_command=PYTHON_IMPORT_CHECK,
        wheel_command=PYTHON_WHEEL if settings.wheel_check and not settings.install else None,
        build_generated=build_generated(base),
        unreadable_code=r"^(?:.*/)?(?!__pycache__/)[^/]+/[^/]+\.py[co]$|^[^/]+\.py[co]$",
        test=settings.test or ".venv/bin/python -m pytest",
        install_env=scm_version_env(base),
        # a file that fails to collect is reported as such, and the other files' tests still run
        test_env={"PYTEST_ADDOPTS": "-p no:cacheprovider -o junit_family=xunit1 --junitxml={report} "
                                    "--continue-on-collection-errors",
                  **SAFE_PYTHON_ENV},
        test_files=SAFE_PYTHON_FILES,
        test_paths=test_paths,
        test_globs=test_globs,
        cannot_start=() if custom else (3, 4),  # pytest: internal error, usage error
        plugin_options=PYTEST_PLUGIN_OPTIONS,
        start_fix=("add the plugin to the test dependencies (an extra such as [project.optional-dependencies] "
                   "test) or drop the option from addopts ([tool.pytest.ini_options]), or set `test` in "
                   "[tool.gatetui]"),
        sealed=tuple(dict.fromkeys([*test_globs, "**/conftest.py", "pytest.ini", ".pytest.ini"])),
        timeout=settings.timeout,
        import_check=settings.import_check,
        on_old_tests_fail=settings.on_old_tests_fail,
        hidden=settings.hidden,
    )


# Head's wheel, built from a copy of the tree (its build leaves nothing in the tree the install
# uses), with the machine's pip and head's declared build backend.
PYTHON_WHEEL = (
    'src="$(mktemp -d)" && out="$(mktemp -d)" && tar -cf - --exclude=./.venv . | tar -xf - -C "$src" && '
    'python3 -m pip wheel --disable-pip-version-check --no-input --progress-bar off --no-deps '
    '-w "$out" "$src" && set -- "$out"/*.whl && [ "$#" -eq 1 ] && [ -f "$1" ] && cp "$1" {report}')


def build_generated(base: Snapshot) -> tuple[str, ...]:
    """The version files version-from-git builds write into the tree."""
    pyproject = parse_toml(base, "pyproject.toml") or {}
    found = []
    for keys, names in ((("tool", "setuptools_scm"), ("write_to", "version_file")),
                        (("tool", "hatch", "build", "hooks", "vcs"), ("version-file",)),
                        (("tool", "pdm", "version"), ("write_to",))):
        table = _table(pyproject, keys)
        found += [table[n] for n in names if isinstance(table.get(n), str)]
    return tuple(path.removeprefix("./") for path in found)


def _table(document: Mapping[str, Any], keys: tuple[str, ...]) -> Mapping[str, Any]:
    """The table at `keys`; empty when any step is missing or no table."""
    for key in keys:
        document = document.get(key)  # type: ignore[assignment]
        if not isinstance(document, Mapping):
            return {}
    return document


# Head's packages imported with only their runtime dependencies in sight (gate/python_imports.py).
PYTHON_IMPORT_CHECK = GateScript(
    '.venv/bin/python -I -c "$GATE_IMPORT_CHECK" {modules}',
    MappingProxyType({"GATE_IMPORT_CHECK": (Path(__file__).parent / "gate" / "python_imports.py").read_text()}))


def python_environment_check(environment: tuple[str, ...]) -> EnvironmentCheck:
    """Each venv among the environment folders against its RECORDs (see
    gate/python_env.py), with the machine's interpreter in isolated mode:
    nothing of the venv is loaded to check it."""
    source = (Path(__file__).parent / "gate" / "python_env.py").read_text()
    command = f'python3 -I -S -c "$GATE_ENV_CHECK" {{report}} {{mode}} {shlex.join(environment)}'
    return EnvironmentCheck(command, MappingProxyType({"GATE_ENV_CHECK": source}))


# Options pytest plugins add, that a project's addopts often name: which
# distribution brings each (the runner's usage error names only the option).
PYTEST_PLUGIN_OPTIONS = MappingProxyType({
    "--cov": "pytest-cov", "--cov-report": "pytest-cov", "--no-cov": "pytest-cov", "--cov-fail-under": "pytest-cov",
    "-n": "pytest-xdist", "--numprocesses": "pytest-xdist", "--dist": "pytest-xdist",
    "--timeout": "pytest-timeout", "--reruns": "pytest-rerunfailures", "--benchmark-skip": "pytest-benchmark",
    "--benchmark-disable": "pytest-benchmark", "--asyncio-mode": "pytest-asyncio", "--mypy": "pytest-mypy",
    "--html": "pytest-html", "--snapshot-update": "syrupy", "--doctest-plus": "pytest-doctestplus",
    "--mpl": "pytest-mpl", "--randomly-seed": "pytest-randomly", "--hypothesis-profile": "hypothesis",
    "--django-settings-module": "pytest-django", "--ds": "pytest-django", "--flake8": "pytest-flake8",
})

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
    patterns = python_files.split() if isinstance(python_files, str) else \
        [str(p) for p in python_files] if isinstance(python_files, list) else list(PYTEST_FILES)
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
    if declared:
        return tuple(declared.split()) if isinstance(declared, str) else tuple(declared)
    return tuple(d for d in ("tests", "test") if base.has_dir(d)) or (".",)


def python_install(base: Snapshot) -> tuple[str, ...]:
    """A fresh venv and the project itself, without its dependencies: head's
    build runs here, before any third-party distribution is installed (see
    python_dependencies for the rest)."""
    return ("python3 -m venv --without-pip .venv", f"{PIP} --no-deps {EDITABLE} -e .")


def python_dependencies(base: Snapshot) -> Dependencies:
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
    args = [target, *(a for f in reqs for a in ("-r", f)), *groups, *tox]
    if not any(re.match(r"\s*pytest\s*($|[<>=!~;\[ ])", d) for d in declared if isinstance(d, str)):
        args.append("pytest")
    return Dependencies(resolve=f"{PIP} {RESOLVE} {shlex.join(args)}",
                        local=f"{PIP} --no-deps {EDITABLE} {{local}}",
                        pinned=f"{PINNED_CACHE} {PIP} --no-deps --require-hashes -r /dev/stdin")


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


def test_requirement_files(base: Snapshot) -> list[str]:
    pattern = re.compile(
        r"^(requirements/)?requirements[-_]?(.*test.*|dev)\.txt$|^requirements/(test.*|dev)\.txt$"
        r"|^(test|tests|dev)[-_]requirements\.txt$"
    )
    return [p for p in base.paths if pattern.match(p)]


def test_sets(declared: Mapping[str, list[str]]) -> list[str]:
    """Which of the test-named extras (or groups) a run needs: the ones named
    for tests (test, tests, testing); `dev` only when there are none, or when
    they do not name pytest (then dev may hold the runner). A dev set pulls
    in linters, type checkers and doc builders no test needs."""
    tests = [n for n in TEST_EXTRAS if n != "dev" and n in declared]
    names_runner = any(re.match(r"\s*pytest\s*($|[<>=!~;\[ ])", r) for n in tests for r in declared[n])
    return tests if tests and names_runner else [n for n in TEST_EXTRAS if n in declared]


def dependency_group_requirements(base: Snapshot) -> list[str]:
    """PEP 735 groups named like test groups (see test_sets), includes resolved."""
    groups = (parse_toml(base, "pyproject.toml") or {}).get("dependency-groups") or {}

    def expand(name: str, seen: frozenset[str]) -> list[str]:
        out: list[str] = []
        for item in groups.get(name, []):
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict) and item.get("include-group") not in seen:
                out += expand(str(item.get("include-group")), seen | {name})
        return out

    expanded = {name: expand(name, frozenset()) for name in TEST_EXTRAS if name in groups}
    return list(dict.fromkeys(r for name in test_sets(expanded) for r in expanded[name]))


def tox_deps(base: Snapshot) -> list[str]:
    """tox's [testenv] deps, minus what needs tox's own substitutions."""
    parser = _ini(base, "tox.ini")
    if parser is None or not parser.has_option("testenv", "deps"):
        return []
    out: list[str] = []
    for line in parser.get("testenv", "deps", raw=True).splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or "{" in line or line.startswith("-c") or TOX_FACTOR.match(line):
            continue  # substitutions, constraints and factor-conditional deps need tox itself
        out += line.split(None, 1) if line.startswith("-r") else [line]
    return out


def _ini(base: Snapshot, path: str):  # type: ignore[no-untyped-def]
    import configparser

    text = base.text(path)
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error as err:
        raise ConfigError(f"{path} at base {base.sha[:7]} cannot be read ({err})") from None
    return parser


def pytest_settings(base: Snapshot) -> dict[str, object]:
    """Base's effective pytest settings, found the way pytest finds them."""
    for name in ("pytest.ini", ".pytest.ini"):
        parser = _ini(base, name)
        if parser is not None:
            return dict(parser["pytest"]) if parser.has_section("pytest") else {}
    table = ((parse_toml(base, "pyproject.toml") or {}).get("tool") or {}).get("pytest") or {}
    if "ini_options" in table:
        return dict(table["ini_options"])
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        parser = _ini(base, name)
        if parser is not None and parser.has_section(section):
            return dict(parser[section])
    return {}


def pytest_ini_text(settings: dict[str, object]) -> str:
    """Base's pytest settings as an ini file that `-c` can load over head's."""
    lines = ["[pytest]"]
    for key, value in settings.items():
        if isinstance(value, list):
            value = "\n    " + "\n    ".join(str(v) for v in value)
        elif isinstance(value, bool):
            value = "true" if value else "false"
        else:  # an ini value read by configparser keeps its line breaks, unindented
            value = "\n    ".join(str(value).split("\n"))
        lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


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


# --- node -------------------------------------------------------------------


def node_profile(base: Snapshot, settings: Settings) -> Profile:
    script = node_test_script(base)
    runner, test = node_test_command(script, settings.test)
    test_paths = settings.test_paths or tuple(d for d in NODE_TEST_DIRS if base.has_dir(d))
    configs = [p for p in base.paths if re.match(r"(vitest|vite)\.config\.[cm]?[jt]s$", p)]
    return Profile(
        stack="node",
        runner=runner,
        install=settings.install or ("npm ci --no-audit --no-fund",),
        tools=() if settings.install else (("npm", "--version"), ("node", "--version")),
        environment=settings.environment if settings.environment is not None else ("node_modules",),
        test=test,
        test_paths=test_paths,
        sealed=tuple(dict.fromkeys(
            [*(f"{p}/**" for p in test_paths), "**/*.test.*", "**/*.spec.*", *configs]
        )),
        timeout=settings.timeout,
        import_check=False,
        on_old_tests_fail=settings.on_old_tests_fail,
        hidden=settings.hidden,
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


def node_test_command(script: str, configured: str | None) -> tuple[str, str]:
    """The runner and the command that makes it write JUnit to {report}."""
    if configured:
        return "custom", configured
    words = shlex.split(script) if script else []
    if words[:1] == ["vitest"]:
        args = [w for w in words[1:] if w not in ("run", "--run", "--watch")]
        return "vitest", shlex.join(
            ["npx", "--no-install", "vitest", "run", *args, "--reporter=default", "--reporter=junit"]
        ) + " --outputFile.junit={report}"
    if words[:2] == ["node", "--test"]:
        reporters = shlex.join(
            ["node", "--test", "--test-reporter=spec", "--test-reporter-destination=stdout",
             "--test-reporter=junit"]
        )
        return "node", f"{reporters} --test-reporter-destination={{report}} {shlex.join(words[2:])}".strip()
    raise ConfigError(
        f"package.json's scripts.test ({script or 'missing'}) runs neither vitest nor node --test; "
        "set test in gatetui.toml to a command that writes JUnit XML to {report}"
    )
