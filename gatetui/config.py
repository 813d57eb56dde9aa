"""`[tool.gatetui]` settings, read from the base commit.

How a change is judged is read from base, never from head: an agent that
edits its own judge (the test command, the sealed paths, the policy) changes
nothing about the run that judges it. `gatetui.toml` at the repository's top
wins over `[tool.gatetui]` in pyproject.toml.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from typing import Any

from gatetui.errors import BadInput
from gatetui.snapshot import Snapshot

DEFAULT_TIMEOUT = 900.0
STACKS = ("python", "node")


class ConfigError(BadInput):
    pass


@dataclass(frozen=True)
class Settings:
    """What a repository may say about how it is gated; None means: detect."""

    source: str = ""  # "gatetui.toml" or "pyproject.toml [tool.gatetui]", for messages
    stack: str | None = None
    install: tuple[str, ...] | None = None
    test: str | None = None
    test_paths: tuple[str, ...] | None = None
    sealed: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    on_old_tests_fail: str = "review"
    import_check: bool = True
    hidden: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


_KEYS = {
    "stack", "install", "test", "test_paths", "sealed", "timeout",
    "on_old_tests_fail", "import_check", "hidden",
}


def parse_toml(snapshot: Snapshot, path: str) -> dict[str, Any] | None:
    """The file parsed, None when absent; malformed TOML is bad input."""
    text = snapshot.text(path)
    if text is None:
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(
            f"{path} at base {snapshot.sha[:7]} is not valid TOML ({err}); fix it on the base branch"
        ) from None


def load_settings(snapshot: Snapshot) -> Settings:
    """The gate settings of the base commit, validated."""
    own = parse_toml(snapshot, "gatetui.toml")
    if own is not None:
        table = own.get("tool", {}).get("gatetui", own)
        return _settings_from(table, "gatetui.toml", snapshot.sha)
    pyproject = parse_toml(snapshot, "pyproject.toml") or {}
    table = pyproject.get("tool", {}).get("gatetui")
    if table is None:
        return Settings()
    return _settings_from(table, "pyproject.toml [tool.gatetui]", snapshot.sha)


def _settings_from(table: Any, source: str, sha: str) -> Settings:
    where = f"{source} at base {sha[:7]}"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table of settings")
    unknown = sorted(set(table) - _KEYS - {"seal", "lab"})
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})"
        )
    get = _Getter(table, where)
    stack = get.choice("stack", STACKS)
    install = get.commands("install")
    timeout = get.number("timeout", DEFAULT_TIMEOUT)
    if timeout <= 0:
        raise ConfigError(f"{where}: timeout must be a positive number of seconds")
    return Settings(
        source=source,
        stack=stack,
        install=install,
        test=get.string("test"),
        test_paths=get.strings("test_paths"),
        sealed=get.strings("sealed") or (),
        timeout=timeout,
        on_old_tests_fail=get.choice("on_old_tests_fail", ("review", "fail")) or "review",
        import_check=get.boolean("import_check", True),
        hidden=get.string("hidden"),
        extra={k: table[k] for k in ("seal", "lab") if k in table},
    )


class _Getter:
    """Typed reads from a settings table, each failure one clear line."""

    def __init__(self, table: dict[str, Any], where: str):
        self.table, self.where = table, where

    def _bad(self, key: str, wanted: str) -> ConfigError:
        return ConfigError(f"{self.where}: {key} must be {wanted}, not {self.table[key]!r}")

    def string(self, key: str) -> str | None:
        value = self.table.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self._bad(key, "a non-empty string")
        return value

    def strings(self, key: str) -> tuple[str, ...] | None:
        value = self.table.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self._bad(key, "a list of non-empty strings")
        return tuple(value)

    def commands(self, key: str) -> tuple[str, ...] | None:
        if isinstance(self.table.get(key), str):
            return (self.string(key) or "",)
        return self.strings(key)

    def choice(self, key: str, options: tuple[str, ...]) -> str | None:
        value = self.table.get(key)
        if value is not None and value not in options:
            raise self._bad(key, " or ".join(repr(o) for o in options))
        return value

    def number(self, key: str, default: float) -> float:
        value = self.table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self._bad(key, "a number")
        return float(value)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.table.get(key, default)
        if not isinstance(value, bool):
            raise self._bad(key, "true or false")
        return value
