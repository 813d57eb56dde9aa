"""The sample repositories: scenarios on disk, and real git repos made from them.

Each `sample_repos/NAME/` holds a `base/` and a `head/` file tree and a
`scenario.toml` that says what the agent did and what the gate must answer.
The trees live as plain folders (not nested git repos) so that the project's
own repository can hold them and a diff of a sample reads as a normal diff.
The gate, the demo and `gatetui samples DIR` need real repositories, so
`materialize` writes one per scenario: `main` at base, `agent/NAME` at head.

The commits are built with dulwich objects, with a fixed identity and fixed
timestamps, so that every machine produces the same commit shas: a verdict,
a screenshot or a bug report that names a sample's head commit means the same
commit everywhere.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import MappingProxyType

from dulwich.index import build_index_from_tree
from dulwich.object_store import BaseObjectStore
from dulwich.objects import Blob, Commit, ObjectID, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from gatetui.stacks import registry

SAMPLES_DIR: Path = Path(__file__).resolve().parents[2] / "sample_repos"

STACKS: frozenset[str] = frozenset(registry.names())
VERDICTS: frozenset[str] = frozenset({"pass", "fail", "review", "error"})  # error: a setup the gate cannot judge
CHECK_IDS: tuple[str, ...] = (
    "install",
    "runs",
    "tests_kept",
    "no_new_skips",
    "old_tests",
    "hidden",
    "covered",
    "bites",
)
# Checks expected `skipped` unless a scenario pins them: most samples change
# only tests, or live in a stack without coverage (covered and bites).
SKIPPED_BY_DEFAULT: frozenset[str] = frozenset({"covered", "bites"})
STATUSES: frozenset[str] = frozenset({"pass", "fail", "review", "error", "skipped"})

# Build output and caches that running a sample by hand leaves behind: never
# part of what the agent committed.
SKIPPED_NAMES: frozenset[str] = frozenset({"__pycache__", ".pytest_cache", "node_modules"})

_TEXT_FIELDS: tuple[str, ...] = ("stack", "title", "story", "catches", "verdict")
_KNOWN_KEYS: frozenset[str] = frozenset(_TEXT_FIELDS) | {"checks", "random_seed", "head_names"}
# A scenario's name becomes the branch `agent/NAME`: keep it a plain ref part.
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")

IDENTITY: bytes = b"gatetui samples <samples@gatetui.invalid>"
BASE_TIME: int = int(datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp())
HEAD_TIME: int = BASE_TIME + 3600
MAIN_REF: Ref = Ref(b"refs/heads/main")

_MODE_FILE = 0o100644
_MODE_EXEC = 0o100755
_MODE_LINK = 0o120000
_MODE_TREE = 0o040000


class SampleError(Exception):
    """A sample on disk is malformed, or a repo cannot be written where asked.

    Messages are one line and name the file or folder at fault, because they
    end up in a terminal next to a path the user can open.
    """


@dataclass(frozen=True)
class Scenario:
    """One sample: what the agent did, and what every check must answer.

    `checks` maps each check id to its expected status (the defaults filled
    in for those scenario.toml omits); `path` is the sample's folder, holding
    `base/`, `head/` and `scenario.toml`.
    """

    name: str
    stack: str
    title: str
    story: str
    catches: str
    verdict: str
    checks: Mapping[str, str] = field(hash=False)
    path: Path
    # The seed of the random-order run (random_order = true in base's config),
    # fixed so the sample answers the same on every machine.
    random_seed: int | None = None
    # head/ paths committed under another file name (one a checkout here could not hold)
    head_names: Mapping[str, str] = field(default_factory=dict, hash=False)

    @property
    def hidden_dir(self) -> Path:
        """Hidden tests, laid out as the state directory's hidden/ folder
        holds them for the repo; never part of either tree."""
        return self.path / "hidden"

    def hidden_tests(self) -> dict[str, bytes]:
        """Every file of `hidden_dir` by path relative to it ({} when none),
        what a caller passes as GateRequest.hidden."""
        if not self.hidden_dir.is_dir():
            return {}
        return {
            p.relative_to(self.hidden_dir).as_posix(): p.read_bytes()
            for p in sorted(self.hidden_dir.rglob("*"))
            if p.is_file() and not SKIPPED_NAMES & set(p.relative_to(self.hidden_dir).parts)
        }

    @property
    def base_dir(self) -> Path:
        """The file tree as it was before the agent's change."""
        return self.path / "base"

    @property
    def head_dir(self) -> Path:
        """The file tree as the agent left it."""
        return self.path / "head"

    @property
    def branch(self) -> str:
        """The agent branch that `materialize` creates for this sample."""
        return f"agent/{self.name}"


def load_scenarios(root: Path = SAMPLES_DIR) -> list[Scenario]:
    """Every sample under `root`, sorted by name, each one validated.

    Every sub-folder (except hidden ones and caches) must be a sample: a
    folder without a scenario.toml is an error rather than silently missing
    from the demo and the tests.
    """
    root = Path(root)
    if not root.is_dir():
        raise SampleError(f"{root}: no such samples folder")
    scenarios = []
    for entry in sorted(root.iterdir(), key=lambda p: p.name):
        if not entry.is_dir() or entry.name.startswith(".") or entry.name in SKIPPED_NAMES:
            continue
        scenarios.append(_load_one(entry))
    return scenarios


def _load_one(folder: Path) -> Scenario:
    """Read and validate `folder/scenario.toml` and the folder's two trees.

    The `[checks]` table names only the checks whose outcome the sample
    pins; every check it omits is expected to pass, except `hidden`, which
    is expected `skipped` unless the sample has a hidden/ folder, and
    `covered` and `bites`, expected `skipped`. The
    scenario's `checks` holds every check, in the gate's order, either way.
    """
    toml_path = folder / "scenario.toml"
    if not toml_path.is_file():
        raise SampleError(f"{toml_path}: missing (every sample folder needs one)")
    if not _NAME_RE.match(folder.name):
        raise SampleError(f"{folder}: sample name must be letters, digits, '-' or '_'")
    try:
        data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SampleError(f"{toml_path}: not valid TOML: {_one_line(str(exc))}") from exc

    unknown = sorted(set(data) - _KNOWN_KEYS)
    if unknown:
        raise SampleError(f"{toml_path}: unknown key {unknown[0]!r}")
    text: dict[str, str] = {}
    for key in _TEXT_FIELDS:
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            raise SampleError(f"{toml_path}: {key!r} must be a non-empty string")
        text[key] = value
    if text["stack"] not in STACKS:
        raise SampleError(f"{toml_path}: unknown stack {text['stack']!r} (expected one of {_listed(STACKS)})")
    if text["verdict"] not in VERDICTS:
        raise SampleError(f"{toml_path}: verdict {text['verdict']!r} is not one of {_listed(VERDICTS)}")

    checks = data.get("checks", {})
    if not isinstance(checks, dict):
        raise SampleError(f"{toml_path}: [checks] must be a table of check id = status")
    for check_id, status in checks.items():
        if check_id not in CHECK_IDS:
            raise SampleError(f"{toml_path}: unknown check id {check_id!r} in [checks]")
        if status not in STATUSES:
            raise SampleError(f"{toml_path}: check {check_id!r} has status {status!r}, not one of {_listed(STATUSES)}")
    for side in ("base", "head"):
        if not (folder / side).is_dir():
            raise SampleError(f"{folder / side}: missing tree folder")

    seed = data.get("random_seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise SampleError(f"{toml_path}: 'random_seed' must be a whole number of 0 or more")
    head_names = _head_names(data.get("head_names", {}), toml_path, folder / "head")

    ordered = {check_id: checks.get(check_id, _expected_by_default(check_id, folder)) for check_id in CHECK_IDS}
    return Scenario(
        name=folder.name,
        checks=MappingProxyType(ordered),
        path=folder,
        random_seed=seed,
        head_names=MappingProxyType(head_names),
        **text,
    )


def _expected_by_default(check_id: str, folder: Path) -> str:
    """A check the scenario does not name is expected to pass; `hidden` is
    expected `skipped` when the sample has no hidden/ folder (nothing to
    run), `covered` and `bites` always (SKIPPED_BY_DEFAULT). A scenario then
    names only the checks whose outcome it pins."""
    if check_id == "hidden" and not (folder / "hidden").is_dir() or check_id in SKIPPED_BY_DEFAULT:
        return "skipped"
    return "pass"


def _head_names(table: object, toml_path: Path, head: Path) -> dict[str, str]:
    """[head_names]: head's files committed under a name no file system
    here should hold (a newline in it), kept in the same folder."""
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise SampleError(f"{toml_path}: [head_names] maps a path in head/ to the name it is committed as")
    for path, name in table.items():
        if not (head / path).is_file():
            raise SampleError(f"{toml_path}: [head_names] names {path!r}, which is no file in head/")
        if path.rpartition("/")[0] != name.rpartition("/")[0] or not name.rpartition("/")[2]:
            raise SampleError(
                f"{toml_path}: [head_names] {path!r} may change its file name only, not its folder ({name!r})"
            )
    return dict(table)


def _listed(values: frozenset[str]) -> str:
    return ", ".join(sorted(values))


def _one_line(message: str) -> str:
    return " ".join(message.split())


def materialize(scenario: Scenario, dest: Path) -> Path:
    """Write `scenario` as a real git repo at `dest` and return `dest`.

    `main` holds the base tree, `agent/NAME` one child commit holding the head
    tree; HEAD points at `main`, whose files and index are checked out, so
    `git status` is clean. `dest` must not exist or be an empty folder: a
    sample never overwrites somebody's files.
    """
    dest = Path(dest)
    if dest.exists():
        if not dest.is_dir():
            raise SampleError(f"{dest}: exists and is not a folder")
        if any(dest.iterdir()):
            raise SampleError(f"{dest}: not empty; samples are written only to a new or empty folder")
    else:
        dest.mkdir(parents=True)

    repo = Repo.init(str(dest))
    try:
        store = repo.object_store
        base_tree = _store_tree(store, scenario.base_dir)
        head_tree = _store_tree(store, scenario.head_dir, scenario.head_names)
        base_commit = _commit(
            store,
            base_tree,
            parents=[],
            when=BASE_TIME,
            message=f"{scenario.name}: base\n\nThe code before the agent's change.\n",
        )
        head_commit = _commit(
            store, head_tree, parents=[base_commit], when=HEAD_TIME, message=f"{scenario.title}\n\n{scenario.story}\n"
        )
        _set_ref(repo, MAIN_REF, base_commit, BASE_TIME)
        _set_ref(repo, Ref(f"refs/heads/{scenario.branch}".encode()), head_commit, HEAD_TIME)
        repo.refs.set_symbolic_ref(Ref(b"HEAD"), MAIN_REF)
        build_index_from_tree(repo.path, repo.index_path(), store, base_tree)
    finally:
        repo.close()
    return dest


def write_all(dest_dir: Path, root: Path = SAMPLES_DIR) -> list[tuple[Scenario, Path]]:
    """Materialize every scenario under `root` as `dest_dir/NAME`.

    All scenarios are loaded (and so validated) before the first repo is
    written, so a malformed sample leaves no half-written set behind.
    """
    dest_dir = Path(dest_dir)
    scenarios = load_scenarios(root)
    return [(scenario, materialize(scenario, dest_dir / scenario.name)) for scenario in scenarios]


def _store_tree(
    store: BaseObjectStore, folder: Path, names: Mapping[str, str] = MappingProxyType({}), prefix: str = ""
) -> ObjectID:
    """Add `folder` (files, exec bits, symlinks) to `store`; return its tree id.

    Empty folders are left out, as git itself leaves them out. A file whose
    path (from the tree's top) `names` maps is stored under that name.
    """
    tree = Tree()
    with os.scandir(folder) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    for entry in entries:
        if entry.name in SKIPPED_NAMES:
            continue
        if entry.name == ".git":
            raise SampleError(f"{Path(entry.path)}: a sample tree cannot hold a .git entry")
        rel = prefix + entry.name
        name = os.fsencode(names.get(rel, rel).rpartition("/")[2])
        if entry.is_symlink():
            blob = Blob.from_string(os.fsencode(os.readlink(entry.path)))
            store.add_object(blob)
            tree.add(name, _MODE_LINK, blob.id)
        elif entry.is_dir():
            if not _has_files(Path(entry.path)):
                continue
            tree.add(name, _MODE_TREE, _store_tree(store, Path(entry.path), names, rel + "/"))
        elif entry.is_file():
            blob = Blob.from_string(Path(entry.path).read_bytes())
            store.add_object(blob)
            executable = entry.stat().st_mode & stat.S_IXUSR
            tree.add(name, _MODE_EXEC if executable else _MODE_FILE, blob.id)
        else:
            raise SampleError(f"{Path(entry.path)}: not a file, folder or symlink")
    store.add_object(tree)
    return tree.id


def _has_files(folder: Path) -> bool:
    """Whether `folder` holds anything git would record."""
    with os.scandir(folder) as listing:
        for entry in listing:
            if entry.name in SKIPPED_NAMES:
                continue
            if entry.is_symlink() or entry.is_file():
                return True
            if entry.is_dir() and _has_files(Path(entry.path)):
                return True
    return False


def _commit(store: BaseObjectStore, tree: ObjectID, parents: list[ObjectID], when: int, message: str) -> ObjectID:
    """Store a commit with the fixed sample identity; return its id."""
    commit = Commit()
    commit.tree = tree
    commit.parents = parents
    commit.author = commit.committer = IDENTITY
    commit.author_time = commit.commit_time = when
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = message.encode("utf-8")
    store.add_object(commit)
    return commit.id


def _set_ref(repo: Repo, ref: Ref, sha: ObjectID, when: int) -> None:
    """Point `ref` at `sha`, with a reflog entry that names no local user."""
    repo.refs.set_if_equals(ref, None, sha, committer=IDENTITY, timestamp=when, timezone=0, message=b"gatetui samples")
