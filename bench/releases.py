"""`make eval`: the gate on honest work nobody here wrote.

The samples' honest changes are ours, so they cannot say how often the gate
cries wolf on real code. Here each pair is two consecutive releases of a
real project from the package index: release N's files are `main`, release
N+1's files are `agent/release`, and `gatetui check` judges them with its
default settings, as it would judge an agent's branch. Every check that is
not `pass` was read by hand (the detail and the real diff between the
releases) and its reading is kept in READINGS below, so the report
regenerates without losing them.

Downloads go through the ordinary clients (pip, npm) and so through the
user's own configuration: no registry address is written here. Both the
downloads and the verdicts are cached under ~/.cache/gatetui-releases, so a
rerun after a stop goes on where it stopped; `--only NAME` reruns the pairs
of one project (or one pair, `NAME@N..M`).

    .venv/bin/python bench/releases.py            # every pair, cached
    .venv/bin/python bench/releases.py --only iniconfig
    .venv/bin/python bench/releases.py --report   # RELEASES.md from the cache only
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dulwich.object_store import BaseObjectStore
from dulwich.objects import Blob, Commit, ObjectID, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "bench" / "RELEASES.md"
PYTHON = ROOT / ".venv" / "bin" / "python"
CACHE = Path(os.environ.get("GATETUI_RELEASES_CACHE", Path.home() / ".cache" / "gatetui-releases"))
COMMAND = ".venv/bin/python bench/releases.py   # or: make eval"
GATE_TIMEOUT = 1800  # seconds for a whole gate; each command inside has the gate's own default
IDENTITY = b"gatetui releases bench <bench@example.invalid>"
MODE_FILE, MODE_EXEC, MODE_TREE, MODE_LINK = 0o100644, 0o100755, 0o040000, 0o120000
CHECKS = ("install", "runs", "tests_kept", "no_new_skips", "old_tests", "hidden", "covered", "bites")
JUDGED = ("fail", "review", "error")  # statuses read by hand; `skipped` is said in the detail


class BenchError(Exception):
    """Bad input or a missing tool: one line, exit 2."""


@dataclass(frozen=True)
class Pair:
    """Two consecutive releases of one project in one ecosystem."""

    stack: str  # "python" or "node"
    name: str
    base: str
    head: str

    @property
    def key(self) -> str:
        return f"{self.name}@{self.base}..{self.head}"


def _chain(stack: str, name: str, *versions: str) -> list[Pair]:
    """Consecutive pairs along `versions` (each release is the next pair's base)."""
    return [Pair(stack, name, a, b) for a, b in zip(versions, versions[1:])]


# Pure-python projects whose sdists ship a pytest suite with light test
# dependencies; consecutive patch or minor releases (none skipped between).
PAIRS: list[Pair] = [
    *_chain("python", "more-itertools", "10.4.0", "10.5.0", "10.6.0", "10.7.0"),
    *_chain("python", "toolz", "0.12.0", "0.12.1", "1.0.0"),
    *_chain("python", "pluggy", "1.4.0", "1.5.0", "1.6.0"),
    *_chain("python", "idna", "3.7", "3.8", "3.9", "3.10"),
    *_chain("python", "cachetools", "5.4.0", "5.5.0", "5.5.1", "5.5.2"),
    *_chain("python", "six", "1.15.0", "1.16.0", "1.17.0"),
    *_chain("python", "humanize", "4.9.0", "4.10.0", "4.11.0"),
    *_chain("python", "boltons", "24.0.0", "24.1.0", "25.0.0"),
    *_chain("python", "itsdangerous", "2.1.2", "2.2.0"),
    *_chain("python", "text-unidecode", "1.2", "1.3"),
    *_chain("python", "click", "8.1.7", "8.1.8"),
    *_chain("python", "pyparsing", "3.1.4", "3.2.0"),
]

# Candidates tried and left out before gating, with why (their sdists were
# opened: a pair with no tests at base is refused by the gate, exit 2).
DROPPED: dict[str, str] = {
    "iniconfig 2.0.0, 2.1.0": "the sdist ships no tests (testing/ is left out)",
    "tomli 2.0.1, 2.0.2, 2.1.0": "the sdists ship no tests",
    "jmespath 1.0.0": "the sdist ships no tests (1.0.1's does)",
    "sortedcontainers 2.3.0, 2.4.0": "the sdists ship no tests",
    "mdurl 0.1.1, 0.1.2": "the sdists ship no tests",
}

# The hand readings: (pair key, check id) -> "true: ...", "false (cause): ..."
# or "out of reach (why): ...". A non-pass check without one shows as unread.
# A false part inside a true finding is said after "false part:" and
# counted apart, so a fix can aim at it.
READINGS: dict[tuple[str, str], str] = {
    (
        "more-itertools@10.4.0..10.5.0",
        "bites",
    ): "true: all_equal's new early `return False` made `return None` passes, as the tests use assertFalse "
    "(the doctest that prints False is not collected)",
    (
        "more-itertools@10.5.0..10.6.0",
        "old_tests",
    ): "true: 10.6.0 changed is_sorted on NaN (only `<` comparisons) and deleted that case from the test",
    (
        "more-itertools@10.5.0..10.6.0",
        "covered",
    ): "true: recipes.py:1025, _factor_pollard's closing `raise ValueError('prime or under 5')`, runs under no "
    "test (a defensive line, unreachable from factor())",
    (
        "more-itertools@10.5.0..10.6.0",
        "bites",
    ): "true: no test calls sample(strict=True) with k equal to the population (`<` -> `<=` survives) and none "
    "checks the error's message (message emptied survives)",
    (
        "more-itertools@10.6.0..10.7.0",
        "tests_kept",
    ): "true: the release renamed OneTests.test_too_short to test_too_short_new and dropped its assertions on "
    "the chained StopIteration",
    (
        "more-itertools@10.6.0..10.7.0",
        "old_tests",
    ): "true: one() no longer chains StopIteration; the old test asserts the chaining",
    (
        "more-itertools@10.6.0..10.7.0",
        "covered",
    ): "out of reach (only an interpreter without itertools.pairwise, before 3.10, runs it): recipes.py:344 is "
    "the `except ImportError:` fallback",
    (
        "idna@3.7..3.8",
        "covered",
    ): "true: 3.8's fix (try/except around valid_contextj) ships no test that reaches the joiner error",
    (
        "idna@3.7..3.8",
        "bites",
    ): "true: `if not valid_contextj` negated survives: no test in the sdist has a label with a joiner that "
    "decides the outcome",
    (
        "idna@3.8..3.9",
        "no_new_skips",
    ): "false (a reformatted line that already skipped counts as added): 3.9 is a ruff format; the three "
    "`raise unittest.SkipTest(...)` lines were joined onto one line each, none is new",
    (
        "idna@3.8..3.9",
        "covered",
    ): "true: the 28 lines really run under no test; 3.9 only reformatted them (quotes, wrapping), so the review "
    "is about old code (a format-only statement has the same AST and could be left out)",
    (
        "idna@3.8..3.9",
        "bites",
    ): "true: no test reads the error messages: nameprep's NotImplementedError text emptied, _unot (only "
    "used to word errors) returning None and check_bidi's positions counted from 2 (only in the "
    "'Unknown directionality' message) all survive; the lines are old code 3.9 only reformatted, as for "
    "covered (bites runs here since no_new_skips no longer fails)",
    (
        "idna@3.9..3.10",
        "covered",
    ): "false (a multi-line `if (` whose first line holds no code): core.py:346 opens a parenthesised "
    "condition; the lines inside it ran in the uts46 tests, python records no event for the `if (` line",
    (
        "idna@3.9..3.10",
        "bites",
    ): "false (a version constant mutated): uts46data.py's `__version__ = \"15.1.0\"` made '' survives; no "
    "test should pin a data table's version string",
    (
        "pluggy@1.4.0..1.5.0",
        "install",
    ): "false (setuptools-scm `write_to` version file): the build rewrites src/pluggy/_version.py "
    "(gitignored, shipped in the sdist), so the wheel's copy differs from the commit's",
    ("pluggy@1.5.0..1.6.0", "install"): "false (setuptools-scm `write_to` version file): as in 1.4.0..1.5.0",
    (
        "six@1.15.0..1.16.0",
        "covered",
    ): "out of reach (only an interpreter without importlib.util.spec_from_loader runs it): six.py:77 "
    "`spec_from_loader = None` is the `except ImportError:` fallback",
    (
        "six@1.16.0..1.17.0",
        "runs",
    ): "false (a process-state test called flaky by reruns): test_lazy deletes and re-imports "
    "six.moves entries in sys.modules; it passes in each fresh run and fails on a rerun in the same process",
    (
        "six@1.16.0..1.17.0",
        "no_new_skips",
    ): 'true: 1.17.0 added `pytest.skip("tkinter.tix removed from Python 3.13")` (and one more): a real, '
    "justified new skip for a person to approve",
    (
        "six@1.16.0..1.17.0",
        "covered",
    ): "false (documentation/conf.py counted as library code): Sphinx's conf.py `copyright = ...` line",
    (
        "humanize@4.9.0..4.10.0",
        "runs",
    ): "false (a process-state test called flaky by reruns): the test_i18n tests activate a locale "
    "(gettext, module-global); in six reruns in one process a failed activation leaks into the next",
    (
        "humanize@4.9.0..4.10.0",
        "tests_kept",
    ): "false (parametrize ids follow their values and index): 4.10.0 moved the frozen date from 2020 to "
    "2010 and inserted a case, so test_naturaldate[...Mar 02 2019] became [...Mar 02 2009]; no test removed",
    (
        "humanize@4.9.0..4.10.0",
        "no_new_skips",
    ): "false (parametrize ids follow their values and index): the same renamed ids counted as deselected",
    (
        "humanize@4.10.0..4.11.0",
        "install",
    ): "false (hatch-vcs version file): the build hook writes src/humanize/_version.py (gitignored, shipped "
    "in the sdist), so the wheel's copy differs from the commit's",
    (
        "humanize@4.10.0..4.11.0",
        "runs",
    ): "false (a process-state test called flaky by reruns): test_naturalsize[300 Bytes] fails only in the "
    "same-process reruns of the changed files, after test_i18n left a locale active",
    (
        "humanize@4.10.0..4.11.0",
        "tests_kept",
    ): "true: 4.11.0 replaced four `__file__` tests of test_i18n by `__spec__` ones (the 19 test_naturalsize "
    "cases whose ids changed with their values are counted per test since 8052997, no longer named)",
    (
        "humanize@4.10.0..4.11.0",
        "no_new_skips",
    ): "false (parametrize ids follow their values and index): test_naturalsize's cases changed values, "
    "their old ids counted as deselected",
    (
        "humanize@4.10.0..4.11.0",
        "old_tests",
    ): "true: base's test_i18n patches i18n.__file__, which 4.11.0 no longer reads (it uses __spec__); "
    "those tests fail and leave a locale active, and 300-odd unchanged tests after them fail with it",
    (
        "humanize@4.10.0..4.11.0",
        "covered",
    ): "false (lines under `if TYPE_CHECKING:` never run): i18n.py:10-11 and the generated _version.py:5-6",
    (
        "boltons@24.0.0..24.1.0",
        "install",
    ): "out of reach (the sdist leaves out requirements-test.txt, which tox.ini names): base fails the same, "
    "the gate says so (error, not the change's fault); the pair does not qualify",
    (
        "boltons@24.1.0..25.0.0",
        "covered",
    ): "true: fileutils.py:469-470, 704, 708 and timeutils.py:226 run under no test (the 242 lines of misc/ "
    "scripts are said as not judged since 7eddcdd)",
    (
        "boltons@24.1.0..25.0.0",
        "bites",
    ): "true: no test calls the new rotate_file with keep=1 (`keep < 1` -> `keep <= 1` survives); since "
    "lines run only at import are tried too, two more: no test relies on rotate_file's default keep=5, "
    "and none reads ecoutils' START_TIME_INFO key 'time_utc'",
    (
        "itsdangerous@2.1.2..2.2.0",
        "old_tests",
    ): "true: 2.2.0 made the default digest a lazy sha1 wrapper; the old test asserts "
    "`digest_method == hashlib.sha1` (the release changed that assertion too)",
    (
        "pluggy@1.4.0..1.5.0",
        "covered",
    ): "false (lines that run at import): the unrun lines are imports, class-level annotations and `def` lines "
    "that pytest itself imports before the gate's coverage starts, so they are not seen at all (a line "
    "seen only at import or collection is now left to bites' mutants; pluggy's are never seen)",
    (
        "pluggy@1.5.0..1.6.0",
        "covered",
    ): "false (lines that run at import), as in 1.4.0..1.5.0, beside a few true ones (_callers.py:52-56, "
    "the generator teardown paths no test closes early)",
    (
        "pluggy@1.5.0..1.6.0",
        "bites",
    ): "true: removing `teardown.close()` in _callers.py survives: no test checks that an old-style "
    "hookwrapper generator is closed when its call raises",
    (
        "click@8.1.7..8.1.8",
        "runs",
    ): "false (a requirements file that pins the project itself): requirements/dev.txt pins click==8.1.7; uv "
    "refuses, pip's resolve then puts the index's click 8.1.7 in the dependency layer, where it shadows "
    "head's own code, and the four tests of 8.1.8's fixes fail against 8.1.7",
    (
        "click@8.1.7..8.1.8",
        "no_new_skips",
    ): 'true: 8.1.8 added a test with `@pytest.mark.skipif(platform.system() == "Windows", ...)`: a new, '
    "platform-only skip for a person to approve",
    (
        "click@8.1.7..8.1.8",
        "old_tests",
    ): "true: base's test_expand_args looks for setup.cfg, which 8.1.8 deleted (8.1.8 changed the test to "
    "*.toml); the index's click 8.1.7 no longer shadows head's since f18bd9b",
    (
        "click@8.1.7..8.1.8",
        "covered",
    ): "true as far as read: the 52 unrun lines are Windows-only and terminal-only branches "
    "(_termui_impl.py, _compat.py) no test on this machine reaches",
    (
        "pyparsing@3.1.4..3.2.0",
        "runs",
    ): "out of reach (tox.ini's `extras=diagrams` holds the test deps, railroad-diagrams and jinja2; the gate "
    "installs only test/tests/testing/dev extras, and base's test_diagram.py fails collection the same "
    "way): the pair does not qualify under default settings",
    (
        "pyparsing@3.1.4..3.2.0",
        "tests_kept",
    ): "true: 3.2.0 renamed testParseActionException to testParseActionIndexErrorException and dropped its "
    "assertions on __cause__",
    (
        "pyparsing@3.1.4..3.2.0",
        "no_new_skips",
    ): "true: the new tests/test_matplotlib_cases.py skips when matplotlib's mathtext is missing (a new "
    "conditional skip; it does skip here)",
    (
        "pyparsing@3.1.4..3.2.0",
        "old_tests",
    ): "true: base's testParseActionException asserts a __cause__ that 3.2.0 no longer sets; out-of-reach "
    "part: test_diagram fails for the missing `diagrams` extra (the re-wrapped extract_stack is no "
    "longer named since 49f5835)",
    (
        "pyparsing@3.1.4..3.2.0",
        "covered",
    ): "true: 65 lines in pyparsing/ run under no test (34 in diagram/, whose tests cannot collect here); "
    "the examples/ scripts are said as not judged since 7eddcdd",
    (
        "itsdangerous@2.1.2..2.2.0",
        "covered",
    ): "true: the deprecated `__version__` __getattr__, BadHeader's annotated attributes and serializer.py:258 "
    "run under no test (the TYPE_CHECKING lines are left out since 7eddcdd)",
    (
        "humanize@4.9.0..4.10.0",
        "bites",
    ): "true: no test sits on the boundaries of naturaldelta, and the search shows the tests to write "
    "(naturaldelta(60) gives 'a minute' here, '60 seconds' with `<=`; 7200 s gives '2 hours', '1 hour' with "
    "`// 3601`); `3600 < delta.seconds` made `<=` survives but cannot differ (an earlier branch takes "
    "3600-7199); false (likely equivalent): the removed `float(value)` differs only for a string, which no "
    "test passes and the search does not try",
}


# What the report says beyond the tables: candidates dropped, what the pairs
# do not cover, and how a release was judged to qualify.
NOTES = """\
## How to read it

- A pair qualifies when release N and N+1 each install and pass their own suite. N+1's own suite is
  the `runs` check; N is the previous pair's head where the chain has one (a chain's first release
  is not gated on its own yet). Where `runs` fails or `install` is `error`, the reading says whether
  the release or the gate is at fault; a pair whose releases fail under the gate's default install
  through no fault of the gate says "does not qualify" there and is kept: boltons 24.0.0..24.1.0 and
  pyparsing 3.1.4..3.2.0. Base's release is tagged `vN` (as its repository has it), so a build
  that takes its version from git names head after it.
- The diff rules (`old_tests`' "library code runs code it builds", "looks at who calls it", "reaches
  into the test runner": an `eval`, an `atexit`, an `import pytest` in library code) fire on no pair
  now. They fired once at 8f88dd0, on pyparsing 3.2.0's re-wrapped `traceback.extract_stack` (there
  since 3.0); a statement only reformatted in its own function is no added code since 49f5835.
- The two false readings left are `covered` on pluggy: lines that run when pytest itself imports
  the package (imports, class-level annotations, `def` lines), before the gate's coverage starts, are
  not seen at all and count as run under no test. Lines seen only at import or collection elsewhere
  (toolz, six, idna...) are counted apart by `covered` and judged by `bites`' mutants.
- The first run (8f88dd0) read 23 checks as false. Fixed since, each with a test: the version file
  a build writes (written by the gate; the wheel's held to holding only a version), a requirements
  file pinning the project itself (f18bd9b), tests failing the reruns on process state (52536df,
  and one case per test function confirmed), parametrized ids renamed with their values and skips
  reformatted (2adcee1), files outside the shipped packages, `if TYPE_CHECKING:` blocks, a
  multi-line `if`'s first line and `__version__` mutants (7eddcdd), a dynamic version of 0 in the
  early resolve (pluggy 1.6), the re-wrapped extract_stack above.
- Node and go are not here yet. The node stack now installs a project without a lockfile (a lock
  made with `npm install --package-lock-only`, running nothing), but the npm packages whose tarballs
  ship tests run them with mocha, jest, tap or ava, which the node stack does not drive (vitest and
  `node --test` only); go: Debian's golang-*-dev packages hold one version per suite, so
  consecutive releases are not both to be had from one archive. Both are left for a later run.

## Candidates dropped before gating

"""


# --- fetching ---------------------------------------------------------------


def sdist(pair: Pair, version: str) -> Path:
    """The release's source archive, downloaded once into the cache."""
    folder = CACHE / "archives" / pair.stack / pair.name / version
    found = _archives(folder)
    if found:
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    if pair.stack == "python":
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--quiet",
            f"{pair.name}=={version}",
            "-d",
            str(folder),
        ]
    elif pair.stack == "node":
        command = ["npm", "pack", "--silent", f"{pair.name}@{version}", "--pack-destination", str(folder)]
    else:
        raise BenchError(f"{pair.key}: unknown stack {pair.stack!r} (python or node)")
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    found = _archives(folder)
    if done.returncode or not found:
        raise BenchError(f"{pair.key}: download of {version} failed: {_last_line(done.stderr)}")
    return found[0]


def _archives(folder: Path) -> list[Path]:
    """The archives in `folder`: .tar.gz, .tgz or .zip."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.name.endswith((".tar.gz", ".tgz", ".zip")))


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no output)"


# --- unpacking --------------------------------------------------------------


def strip_top(names: Iterable[str]) -> str:
    """The one top folder every member of an sdist or npm tarball sits under
    (`pkg-1.0/`, `package/`), which the repository does not have; "" if none."""
    tops = {name.lstrip("./").split("/", 1)[0] for name in names if name.strip("./")}
    nested = all("/" in name.lstrip("./") or name.lstrip("./") in tops for name in names)
    return tops.pop() + "/" if len(tops) == 1 and nested else ""


def unpack(archive: Path) -> dict[str, tuple[bytes, int]]:
    """The archive's regular files and symlinks by repository path, with their
    git mode; the top folder stripped. Nothing is written to disk."""
    if archive.name.endswith(".zip"):
        return _unzip(archive)
    files: dict[str, tuple[bytes, int]] = {}
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.isfile() or m.issym()]
        top = strip_top(m.name for m in members)
        for member in members:
            path = member.name.lstrip("./")[len(top) :]
            if not path or ".." in path.split("/"):
                continue
            if member.issym():
                files[path] = (member.linkname.encode(), MODE_LINK)
            else:
                data = tar.extractfile(member)
                files[path] = (data.read() if data else b"", MODE_EXEC if member.mode & stat.S_IXUSR else MODE_FILE)
    return files


def _unzip(archive: Path) -> dict[str, tuple[bytes, int]]:
    with zipfile.ZipFile(archive) as zf:
        names = [n for n in zf.namelist() if not n.endswith("/")]
        top = strip_top(names)
        return {n[len(top) :]: (zf.read(n), MODE_FILE) for n in names if n[len(top) :]}


# --- the repository ---------------------------------------------------------


def tree_of(store: BaseObjectStore, files: Mapping[str, tuple[bytes, int]]) -> ObjectID:
    """Store `files` (path -> (bytes, mode)) as nested trees; return the top's id."""
    children: dict[str, dict[str, tuple[bytes, int]]] = {}
    tree = Tree()
    for path, (data, mode) in files.items():
        head, _, rest = path.partition("/")
        if rest:
            children.setdefault(head, {})[rest] = (data, mode)
        else:
            blob = Blob.from_string(data)
            store.add_object(blob)
            tree.add(head.encode(), mode, blob.id)
    for name, sub in children.items():
        tree.add(name.encode(), MODE_TREE, tree_of(store, sub))
    store.add_object(tree)
    return tree.id


def make_repo(
    dest: Path, pair: Pair, base: Mapping[str, tuple[bytes, int]], head: Mapping[str, tuple[bytes, int]]
) -> None:
    """A real git repo at `dest`: `main` = release N, tagged `vN`, and
    `agent/release` = N+1 (not yet tagged, as an agent's branch is not)."""
    repo = Repo.init(str(dest), mkdir=True)
    try:
        store = repo.object_store
        first = _commit(store, tree_of(store, base), [], f"{pair.name} {pair.base}\n", 1_600_000_000)
        second = _commit(store, tree_of(store, head), [first], f"{pair.name} {pair.head}\n", 1_600_000_600)
        repo.refs[Ref(b"refs/heads/main")] = first
        # a release is tagged, as its project's repository has it: a build that
        # takes its version from git (setuptools-scm) names head after it
        repo.refs[Ref(f"refs/tags/v{pair.base}".encode())] = first
        repo.refs[Ref(b"refs/heads/agent/release")] = second
        repo.refs.set_symbolic_ref(Ref(b"HEAD"), Ref(b"refs/heads/main"))
    finally:
        repo.close()


def _commit(store: BaseObjectStore, tree: ObjectID, parents: list[ObjectID], message: str, when: int) -> ObjectID:
    commit = Commit()
    commit.tree, commit.parents = tree, parents
    commit.author = commit.committer = IDENTITY
    commit.author_time = commit.commit_time = when
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = message.encode()
    store.add_object(commit)
    return commit.id


# --- gating -----------------------------------------------------------------


def gate(pair: Pair, source: tuple[str, Path]) -> dict[str, object]:
    """Download, build the repo, run `gatetui check --json` with the gatetui
    exported at `source` (commit, folder); the result record."""
    base, head = unpack(sdist(pair, pair.base)), unpack(sdist(pair, pair.head))
    with tempfile.TemporaryDirectory(prefix="releases-") as tmp:
        repo, state = Path(tmp) / "repo", Path(tmp) / "state"
        make_repo(repo, pair, base, head)
        state.mkdir()
        command = [
            str(PYTHON),
            "-m",
            "gatetui",
            "check",
            str(repo),
            "--base",
            "main",
            "--head",
            "agent/release",
            "--json",
            "--state-dir",
            str(state),
        ]
        started = time.monotonic()
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=GATE_TIMEOUT,
                cwd=tmp,
                env={**os.environ, "PYTHONPATH": str(source[1])},
            )
        except subprocess.TimeoutExpired:
            return {"exit": None, "verdict": "timeout", "checks": [], "error": f"gate over {GATE_TIMEOUT} s"}
        seconds = round(time.monotonic() - started, 1)
    record: dict[str, object] = {"exit": done.returncode, "seconds": seconds, "commit": source[0][:12]}
    try:
        verdict = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {**record, "verdict": "no-json", "checks": [], "error": _last_line(done.stderr)}
    checks = [{k: c.get(k) for k in ("id", "status", "detail", "seconds")} for c in verdict.get("checks", [])]
    return {**record, "verdict": verdict.get("verdict"), "checks": checks}


def gatetui_source(ref: str = "HEAD") -> tuple[str, Path]:
    """The commit `ref` of gatetui and its `gatetui/` package exported under
    the cache: the gate runs from a commit, never from the working tree,
    which other engineers edit while the bench runs (a half-made edit there
    once failed every gate with an ImportError)."""
    with Repo(str(ROOT)) as repo:
        try:
            sha = (repo.head() if ref == "HEAD" else repo.refs[Ref(ref.encode())]).decode()
        except KeyError:
            raise BenchError(f"--gatetui {ref}: no such ref in {ROOT} (a full ref: refs/heads/NAME)") from None
        dest = CACHE / "gatetui" / sha
        if not (dest / "gatetui" / "__main__.py").exists():
            tmp = dest.with_name(sha + ".tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            top = repo[repo[sha.encode()].tree]  # type: ignore[attr-defined]
            assert isinstance(top, Tree)
            _export(repo, top, tmp, "gatetui")
            shutil.rmtree(dest, ignore_errors=True)
            tmp.rename(dest)
    return sha, dest


def _export(repo: Repo, tree: Tree, dest: Path, only: str = "") -> None:
    """Write `tree`'s files under `dest` (only the entry `only` at the top, when given)."""
    for entry in tree.items():
        name = entry.path.decode()
        if only and name != only:
            continue
        if entry.mode == MODE_TREE:
            _export(repo, repo[entry.sha], dest / name)  # type: ignore[arg-type]
        elif entry.mode in (MODE_FILE, MODE_EXEC):
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            (dest / name).write_bytes(repo[entry.sha].as_raw_string())


Record = dict[str, Any]  # one pair's result: exit, verdict, seconds, commit, checks (id, status, detail)


# --- the cache --------------------------------------------------------------


def load_results() -> dict[str, Record]:
    path = CACHE / "results.json"
    return json.loads(path.read_text()) if path.exists() else {}


def save_results(results: Mapping[str, Record]) -> None:
    """Written whole after every pair, through a rename: a stop loses at most one gate."""
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = CACHE / "results.json.tmp"
    tmp.write_text(json.dumps(results, indent=1, sort_keys=True))
    tmp.replace(CACHE / "results.json")


# --- the report -------------------------------------------------------------


def reading_kind(reading: str | None) -> str:
    """`true`, `false`, `out of reach` or `unread`: the row a reading counts in."""
    if not reading:
        return "unread"
    for kind in ("true", "false", "out of reach"):
        if reading.startswith(kind):
            return kind
    return "unread"


def one_line(text: object, width: int = 300) -> str:
    """A cell: one line, pipes escaped, cut at `width` characters."""
    flat = " ".join(str(text or "").split()).replace("|", "\\|")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def render(
    pairs: list[Pair], results: Mapping[str, Record], readings: Mapping[tuple[str, str], str], commit: str
) -> str:
    """RELEASES.md: the command, one table per pair, the counts."""
    out = [
        "# The gate on real releases",
        "",
        "Made by `" + COMMAND + "` (needs the package index; not part of `make test`).",
        "Each pair: release N of a project as `main`, release N+1 as `agent/release`, gated by",
        "`gatetui check REPO --base main --head agent/release --json --state-dir TMP` with default settings.",
        "Every check that is `fail`, `review` or `error` was read by hand against the detail and the",
        "real diff between the releases; `reading` says whether the gate was right (true), wrong",
        "(false, and why) or could not judge (out of reach, and why). `hidden` is not configured,",
        "so it is `skipped` everywhere and left out of the tables.",
        "",
        f"gatetui commits that judged: {commit}",
        "",
    ]
    kinds: Counter[str] = Counter()
    per_check: Counter[tuple[str, str]] = Counter()
    verdicts: Counter[str] = Counter()
    done = [p for p in pairs if p.key in results]
    for pair in done:
        result = results[pair.key]
        verdicts[str(result.get("verdict"))] += 1
        out += [
            f"## {pair.key} ({pair.stack})",
            "",
            f"verdict **{result.get('verdict')}**, exit {result.get('exit')}, {result.get('seconds', '?')} s,"
            f" gatetui {result.get('commit', '?')}",
            "",
        ]
        if result.get("error"):
            out += [f"gate output: {one_line(result['error'])}", ""]
        out += ["| check | status | detail | reading |", "|---|---|---|---|"]
        for check in result.get("checks", []):
            if check["id"] == "hidden" and check["status"] == "skipped":
                continue
            reading = readings.get((pair.key, check["id"])) if check["status"] in JUDGED else None
            if check["status"] in JUDGED:
                kind = reading_kind(reading)
                kinds[kind] += 1
                per_check[(check["id"], kind)] += 1
                kinds["false part"] += "false part:" in (reading or "")
            out.append(
                f"| {check['id']} | {check['status']} | {one_line(check['detail'])} | "
                f"{one_line(reading or ('unread' if check['status'] in JUDGED else ''))} |"
            )
        out.append("")
    out += [NOTES.rstrip("\n"), *[f"- {name}: {why}" for name, why in DROPPED.items()], ""]
    out += summary(pairs, done, verdicts, kinds, per_check)
    return "\n".join(out) + "\n"


def summary(
    pairs: list[Pair],
    done: list[Pair],
    verdicts: Counter[str],
    kinds: Counter[str],
    per_check: Counter[tuple[str, str]],
) -> list[str]:
    """The counts at the end: verdicts, readings, and readings per check."""
    projects = {(p.stack, p.name) for p in done}
    out = [
        "## Summary",
        "",
        f"{len(done)} of {len(pairs)} pairs gated, from {len(projects)} projects.",
        "",
        "| verdict | pairs |",
        "|---|---|",
        *[f"| {v} | {n} |" for v, n in sorted(verdicts.items())],
        "",
        "| reading of a non-pass check | count |",
        "|---|---|",
        *[f"| {k} | {kinds[k]} |" for k in ("true", "false", "out of reach", "unread")],
        "",
        f'Of the true findings, {kinds["false part"]} also hold a false part (said after "false part:").',
        "",
        "| check | true | false | out of reach | unread |",
        "|---|---|---|---|---|",
    ]
    for check in CHECKS:
        row = [per_check[(check, k)] for k in ("true", "false", "out of reach", "unread")]
        if any(row):
            out.append(f"| {check} | " + " | ".join(map(str, row)) + " |")
    return out


# --- the command ------------------------------------------------------------


def selected(pairs: list[Pair], only: str | None) -> list[Pair]:
    """The pairs `--only` names: a project's name, or one pair's key."""
    if only is None:
        return pairs
    chosen = [p for p in pairs if only in (p.name, p.key)]
    if not chosen:
        raise BenchError(
            f"--only {only}: no such project or pair (names: {', '.join(sorted({p.name for p in pairs}))})"
        )
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="rerun the pairs of one project, or one pair NAME@N..M")
    parser.add_argument("--report", action="store_true", help="only rewrite RELEASES.md from the cache")
    parser.add_argument(
        "--gatetui",
        default="HEAD",
        metavar="REF",
        help="the commit of gatetui that judges (default HEAD; never the working tree)",
    )
    args = parser.parse_args(argv)
    try:
        chosen = selected(PAIRS, args.only)
        if not args.report and not PYTHON.exists():
            raise BenchError(f"{PYTHON}: missing; run `make venv` first")
        results = load_results()
        if not args.report:
            run(chosen, results, rerun=args.only is not None, source=gatetui_source(args.gatetui))
    except BenchError as exc:
        print(f"releases: {exc}", file=sys.stderr)
        return 2
    commits = sorted({str(r.get("commit")) for k, r in results.items() if r.get("commit")})
    REPORT.write_text(render(PAIRS, results, READINGS, ", ".join(commits) or "(none yet)"))
    print(f"wrote {REPORT.relative_to(ROOT)}", file=sys.stderr)
    return 0


def run(pairs: list[Pair], results: dict[str, Record], rerun: bool, source: tuple[str, Path]) -> None:
    """Gate each pair not cached yet (every chosen one when `rerun`), one at a time."""
    for pair in pairs:
        if pair.key in results and not rerun:
            continue
        print(f"{pair.key}: gating", file=sys.stderr, flush=True)
        try:
            results[pair.key] = gate(pair, source)
        except BenchError as exc:
            results[pair.key] = {"exit": None, "verdict": "not gated", "checks": [], "error": str(exc)}
        record = results[pair.key]
        print(
            f"{pair.key}: {record.get('verdict')} in {record.get('seconds', '?')} s "
            + " ".join(f"{c['id']}={c['status']}" for c in record.get("checks", [])),
            file=sys.stderr,
            flush=True,
        )
        save_results(results)


if __name__ == "__main__":
    sys.exit(main())
