"""`[tool.gatetui]` settings, read from the base commit.

How a change is judged is read from base, never from head: an agent that
edits its own judge (the test command, the sealed paths, the policy) changes
nothing about the run that judges it. `gatetui.toml` at the repository's top
wins over `[tool.gatetui]` in pyproject.toml.

Sealing rules live in `[tool.gatetui.seal]`: the top-level keys tune the
default rule (the stack's sealed set), `[[tool.gatetui.seal.rules]]` adds
named rules. Only their syntax is checked here; the stack's defaults are
filled in by the stack (stacks/).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gatetui.errors import BadInput
from gatetui.git.snapshot import Snapshot

DEFAULT_TIMEOUT = 900.0
DEFAULT_MUTANT_CAP = 20  # bites: about as many mutants as a reviewer reads
ON_CHANGE = ("review", "fail", "allow")
DEFAULT_RULE = "default"
# The files whose sections a rule can name (`FILE#SECTION`), by how they parse.
SECTION_FORMATS = {".toml": "toml", ".ini": "ini", ".cfg": "ini", ".json": "json"}


class ConfigError(BadInput):
    pass


@dataclass(frozen=True)
class SealRule:
    """Paths an agent may not silently change, and what a change does.

    `paths` holds globs of whole files and `FILE#SECTION` entries (a TOML or
    JSON key path, an ini section), so that an edit elsewhere in the same
    file is no change. `on_change`: `review` (old_tests restores the files,
    a failure asks a person), `fail` (any change fails the verdict), `allow`
    (watched in the digests only: not restored, never a violation).
    `allow_new`: new files under the globs are not a change, edits and
    deletions of base's files are.
    """

    name: str
    paths: tuple[str, ...]
    on_change: str = "review"
    allow_new: bool = False

    @property
    def globs(self) -> tuple[str, ...]:
        return tuple(p for p in self.paths if "#" not in p)

    @property
    def sections(self) -> tuple[str, ...]:
        return tuple(p for p in self.paths if "#" in p)


@dataclass(frozen=True)
class SealSettings:
    """`[tool.gatetui.seal]` as written; None means: not said here."""

    paths: tuple[str, ...] | None = None  # the default rule's; None: the stack's sealed set
    on_change: str = "review"
    allow_new: bool = False
    rules: tuple[SealRule, ...] = ()
    hidden: str | None = None
    random_order: bool | None = None
    baseline: bool | None = None


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
    wheel_check: bool = True  # python: build head's wheel and compare its code with the commit's
    hidden: str | None = None  # a folder under the state directory's hidden/, never in the repo
    random_order: bool = False  # one of the three runs in a random order (the runner's to do)
    baseline: bool = False  # judge `runs` against base's own failures (the runner's to do)
    test_network: bool = False  # the test runs get the network (default: loopback alone)
    # top-level folders the install makes that the test runs get, read-only
    # (default: the stack's, .venv or node_modules); nothing else it wrote
    environment: tuple[str, ...] | None = None
    submit_cap: int | None = None  # submits per branch before a person takes over (the supervisor's)
    mutant_cap: int = DEFAULT_MUTANT_CAP  # bites: mutants tried at most per gate run (0: none)
    seal: SealSettings = field(default_factory=SealSettings)
    extra: dict[str, Any] = field(default_factory=dict)


_KEYS = {
    "stack",
    "install",
    "test",
    "test_paths",
    "sealed",
    "timeout",
    "on_old_tests_fail",
    "import_check",
    "wheel_check",
    "hidden",
    "random_order",
    "baseline",
    "seal",
    "test_network",
    "submit_cap",
    "environment",
    "mutant_cap",
}
_SEAL_KEYS = {"paths", "on_change", "allow_new", "rules", "hidden", "random_order", "baseline"}
_RULE_KEYS = {"name", "paths", "on_change", "allow_new"}


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
    unknown = sorted(set(table) - _KEYS - {"lab"})
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})")
    get = _Getter(table, where)
    stack = get.string("stack")  # which stacks exist is the registry's (stacks/registry.py)
    install = get.commands("install")
    timeout = get.number("timeout", DEFAULT_TIMEOUT)
    if timeout <= 0:
        raise ConfigError(f"{where}: timeout must be a positive number of seconds")
    seal = parse_seal(table.get("seal", {}), where)
    for key in ("hidden", "random_order", "baseline"):
        if key in table and getattr(seal, key) is not None:
            raise ConfigError(f"{where}: {key} is set both at the top and in seal; keep one")
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
        wheel_check=get.boolean("wheel_check", True),
        hidden=seal.hidden or hidden_folder(get, "hidden"),
        random_order=get.boolean("random_order", bool(seal.random_order)),
        baseline=get.boolean("baseline", bool(seal.baseline)),
        test_network=get.boolean("test_network", False),
        environment=environment_folders(get.strings("environment"), where),
        submit_cap=get.count("submit_cap"),
        mutant_cap=_default(get.count("mutant_cap"), DEFAULT_MUTANT_CAP),
        seal=seal,
        extra={k: table[k] for k in ("lab",) if k in table},
    )


def _default(value: int | None, default: int) -> int:
    return default if value is None else value


def environment_folders(names: tuple[str, ...] | None, where: str) -> tuple[str, ...] | None:
    """Top-level folder names only: the test runs see each at its place in a
    fresh tree, so a path into the tree (or out of it) has no meaning here."""
    for name in names or ():
        if name in ("", ".", "..") or "/" in name or any(ord(c) < 32 for c in name):
            raise ConfigError(
                f'{where}: environment entry {name!r} is not a top-level folder name (say ".venv", not a path)'
            )
    return names


def parse_seal(table: Any, where: str) -> SealSettings:
    """`[tool.gatetui.seal]` validated: every mistake is one line naming the key."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: seal must be a table ([tool.gatetui.seal])")
    unknown = sorted(set(table) - _SEAL_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key seal.{unknown[0]} (known: {', '.join(sorted(_SEAL_KEYS))})")
    get = _Getter(table, where, "seal.")
    paths = get.strings("paths")
    if paths is not None:
        check_paths(paths, where, "seal.paths")
    rules = table.get("rules", [])
    if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
        raise ConfigError(f"{where}: seal.rules must be an array of tables ([[tool.gatetui.seal.rules]])")
    parsed = tuple(_rule(rule, i, where) for i, rule in enumerate(rules, 1))
    names = [DEFAULT_RULE, *(r.name for r in parsed)]
    for i, name in enumerate(names):
        if name in names[:i]:
            what = "is the top-level rule's name" if name == DEFAULT_RULE else "is used twice"
            raise ConfigError(f"{where}: seal rule name {name!r} {what}; give each rule its own name")
    return SealSettings(
        paths=paths,
        on_change=get.choice("on_change", ON_CHANGE) or "review",
        allow_new=get.boolean("allow_new", False),
        rules=parsed,
        hidden=hidden_folder(get, "hidden"),
        random_order=get.maybe_boolean("random_order"),
        baseline=get.maybe_boolean("baseline"),
    )


def _rule(table: dict[str, Any], index: int, where: str) -> SealRule:
    label = f"seal.rules[{index}]"
    unknown = sorted(set(table) - _RULE_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {label}.{unknown[0]} (known: {', '.join(sorted(_RULE_KEYS))})")
    get = _Getter(table, where, f"{label}.")
    name = get.string("name")
    if name is None:
        raise ConfigError(f'{where}: {label} needs a name (name = "existing tests")')
    paths = get.strings("paths")
    if not paths:
        raise ConfigError(f"{where}: {label} ({name!r}) needs paths, a list of globs or FILE#SECTION entries")
    check_paths(paths, where, f"{label}.paths")
    return SealRule(name, paths, get.choice("on_change", ON_CHANGE) or "review", get.boolean("allow_new", False))


def check_paths(paths: tuple[str, ...], where: str, key: str) -> None:
    """Globs are relative; a `FILE#SECTION` names a file gatetui can parse."""
    for path in paths:
        file, hash_, section = path.partition("#")
        if path.startswith("/") or ".." in file.split("/"):
            raise ConfigError(f"{where}: {key} entry {path!r} must be relative to the repository's top, without '..'")
        if not hash_:
            continue
        suffix = Path(file).suffix
        if suffix not in SECTION_FORMATS or re.search(r"[*?\[]", file):
            raise ConfigError(
                f"{where}: {key} entry {path!r} names a section of a file gatetui cannot parse; "
                "sections work in one .toml, .ini, .cfg or .json file (pyproject.toml#tool.pytest.ini_options)"
            )
        keys = section_keys(section)
        named = bool(section.strip()) if SECTION_FORMATS[suffix] == "ini" else bool(keys) and all(keys)
        if not named:
            raise ConfigError(f"{where}: {key} entry {path!r} needs a section after '#' (like tool.pytest.ini_options)")


_KEY_PART = re.compile(r'\s*(?:"([^"]*)"|([^."\s]+))\s*(\.|$)')


def section_keys(section: str) -> tuple[str, ...]:
    """A TOML or JSON key path, `"quoted.parts"` kept whole (`tool."a.b"` is
    two keys); () when it is not one (`a..b`, a trailing dot)."""
    out: list[str] = []
    pos = 0
    while pos < len(section):
        match = _KEY_PART.match(section, pos)
        if match is None or match.end() == pos:
            return ()
        out.append(match.group(1) if match.group(1) is not None else match.group(2))
        pos = match.end()
        if match.group(3) == "." and pos == len(section):
            return ()
    return tuple(out)


def hidden_folder(get: _Getter, key: str) -> str | None:
    """Hidden tests live in the supervisor's state directory, never in the
    repo: the setting names a folder under its hidden/, relative."""
    value = get.string(key)
    if value is not None and (value.startswith("/") or ".." in value.split("/")):
        raise ConfigError(
            f"{get.where}: {get.prefix}{key} must name a folder inside the state directory's hidden/ "
            f"(relative, no '..'), not {value!r}: hidden tests never live in the repo"
        )
    return value


def load_seal_file(path: Path) -> SealSettings:
    """A rules file for the lab: `[tool.gatetui.seal]`, `[seal]`, or the
    seal table's keys at the top of the file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ConfigError(f"cannot read the rules file {path}: {err.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"the rules file {path} is not valid TOML ({err}); fix it") from None
    table = data.get("tool", {}).get("gatetui", {}).get("seal") if "tool" in data else data.get("seal", data)
    return parse_seal(table if table is not None else {}, str(path))


class _Getter:
    """Typed reads from a settings table, each failure one clear line."""

    def __init__(self, table: dict[str, Any], where: str, prefix: str = ""):
        self.table, self.where, self.prefix = table, where, prefix

    def _bad(self, key: str, wanted: str) -> ConfigError:
        return ConfigError(f"{self.where}: {self.prefix}{key} must be {wanted}, not {self.table[key]!r}")

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
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
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

    def count(self, key: str) -> int | None:
        """A whole number, 0 or more; None when absent."""
        value = self.table.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise self._bad(key, "a whole number, 0 or more")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.maybe_boolean(key)
        return default if value is None else value

    def maybe_boolean(self, key: str) -> bool | None:
        """None when the key is absent: a later layer decides."""
        value = self.table.get(key)
        if value is not None and not isinstance(value, bool):
            raise self._bad(key, "true or false")
        return value
