"""What base's own configuration files say about its tests: the test
dependencies it declares (extras, PEP 735 groups, requirements files, tox's
deps) and its pytest settings, read as pytest and tox read them."""

from __future__ import annotations

import configparser
import re
from collections.abc import Mapping

from gatetui.config import ConfigError, parse_toml
from gatetui.git.snapshot import Snapshot

TEST_EXTRAS = ("test", "tests", "testing", "dev")
TOX_FACTOR = re.compile(r"^!?[\w.-]+(?:[,-]!?[\w.-]+)*\s*:\s")


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


def _ini(base: Snapshot, path: str) -> configparser.ConfigParser | None:
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
