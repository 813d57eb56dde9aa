"""How a local run's trees lie on disk, and how each command sees them.

A venv and an editable install hold absolute paths, so every copy of an
installed workspace must run at the original's path `ws`: as an overlay
over a fresh export (a fork costs nothing, and each copy's writes stay its
own), or as a full copy bind-mounted there where overlays are refused, each
in a private mount namespace; where no namespace is allowed, a copy is
swapped into place for one command at a time. This module holds that
layout: the mount scripts, where a workspace's tree, layer, home and
reports are (`Layout`), and how the copies' trees are made. It is apart
from the workspace, which runs commands, because what a copy is made of
(a fresh export, only the install's environment folders, nothing the
install left elsewhere) is a trust rule of its own.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gatetui.backends.base import TreeExporter
from gatetui.backends.confine import View, Where
from gatetui.backends.local_home import furnish
from gatetui.errors import BackendError

BIND_SCRIPT = 'mount --bind "$0" "$1" && cd "$1" && exec /bin/sh -c "$2"'
OVERLAY_SCRIPT = (  # $3: the lower tree (a fresh export), shown at $1
    'mount -t overlay overlay -o "lowerdir=${3:-$1},upperdir=$0/up,workdir=$0/wk" "$1" '
    '&& cd "$1" && exec /bin/sh -c "$2"'
)
UNSHARE = ["unshare", "--mount", "--propagation", "private"]
FORK_MODES = ("overlay", "bind", "swap")


@dataclass(frozen=True)
class Copy:
    """What a test run's copy is made of besides its own folder: the fresh
    export it starts from (an overlay's lower tree), its fresh home, and the
    environment folders shown from the installed tree."""

    lower: Path
    home: Path
    keep: tuple[str, ...]


class Layout:
    """One tree at the run's canonical path `ws`.

    The original holds the installed export; a copy is either an overlay
    layer (`source` holds `up/` and `wk/`) or a full copy (`source` is the
    tree), and is shown at `ws` only inside its own commands' namespace.
    """

    def __init__(
        self,
        root: Path,
        source: Path,
        label: str,
        mode: str,
        uid: int | None = None,
        copy: Copy | None = None,
        where: Where | None = None,
    ):
        self.root = root
        self.where = where or Where.draw()  # the run's paths as its commands see them (isolated)
        self.copy = copy  # a test run's: what it is made of besides `source`
        self.uid = uid  # the run's own uid, shared by its copies; None: not isolated
        self.canonical = root / "ws"
        self.source = source
        self.label = label
        self.mode = mode
        self._tokens: dict[str, str] = {}
        self.deps: Path | None = None  # a dependency layer shown read-only to every later command
        self.deps_at = ""  # the layer's folder also shown at that place in the tree

    def layer_path(self, folder: Path, at: str = "") -> str:
        """Where commands see the dependency layer at `folder`: at a path
        drawn for the run where it is isolated (its cache, a `cache` folder
        beside it, then under each command's scratch cache; its folder `at`
        at that place in the tree), else where it lies (and the runs do
        without its cache: no namespace to show it in)."""
        self.deps, self.deps_at = folder, at
        return self.where.layer if self.uid is not None else str(folder)

    @property
    def shows_in_tree(self) -> bool:
        """Only an isolated command has a mount namespace of its own to show
        a layer's folder at a place in the tree."""
        return self.uid is not None

    @property
    def path(self) -> str:
        return self.where.tree if self.uid is not None else str(self.canonical)

    @property
    def is_original(self) -> bool:
        return self.source == self.canonical

    @property
    def files_root(self) -> Path:
        """Where this workspace's own files are written before a command runs."""
        return self.source / "up" if self.mode == "overlay" and not self.is_original else self.source

    def report_path(self, name: str) -> str:
        """Outside the tree, under a name no other copy or run can predict."""
        folder = self.where.reports if self.uid is not None else str(self.root / "reports")
        return f"{folder}/{self._report_name(name)}"

    def scratch_path(self, name: str) -> str:
        """In the command's own /tmp where the run is isolated (a fresh tmpfs
        each command, so a name drawn once per run is as unplanted as one
        drawn per command, and the layer's cache can be shown under it),
        else in the run's tmp folder."""
        if self.uid is not None:
            return self.where.scratch_path(name)
        return f"{self.root / 'tmp'}/{name}-{os.urandom(8).hex()}"

    def _report_name(self, name: str) -> str:
        token = self._tokens.setdefault(name, os.urandom(8).hex())
        return f"{self.label}-{token}-{name}"

    @property
    def reports(self) -> Path:
        """Each copy's own: a run cannot touch the old tests' report."""
        return self.root / "reports" / self.label

    def _view(self) -> View:
        if self.copy is None:
            return View(
                self.canonical, self.root / "home", self.reports, self.where, deps=self.deps, deps_at=self.deps_at
            )
        environment, keep = self.canonical, self.copy.keep
        if self.mode == "overlay":
            return View(
                self.copy.lower,
                self.copy.home,
                self.reports,
                self.where,
                layer=self.source,
                environment=environment,
                keep=keep,
                deps=self.deps,
                deps_at=self.deps_at,
            )
        return View(
            self.source,
            self.copy.home,
            self.reports,
            self.where,
            environment=environment,
            keep=keep,
            deps=self.deps,
            deps_at=self.deps_at,
        )


def lay_out(
    export: TreeExporter,
    installed: Path,
    fresh: Path,
    keep: tuple[str, ...],
    dests: list[Path],
    mode: str,
    uid: int | None,
) -> tuple[str, ...]:
    """The copies' trees on disk: one fresh export (an overlay's lower
    tree, or copied whole for each), with room for the environment."""
    export(fresh)
    kept = _environment(installed, keep)
    _make_room(fresh, keep, kept)
    if uid is not None:
        chown_tree((fresh,), uid)
    for dest in dests:
        if mode != "overlay":
            _copy_tree_now(fresh, dest)
        else:
            for sub in ("up", "wk"):
                (dest / sub).mkdir(parents=True)
            if uid is not None:  # the top folder shown is the layer's
                os.chown(dest / "up", uid, uid)
        if uid is None:  # no namespace of its own to show the environment in: a copy of it
            own = dest / "up" if mode == "overlay" else dest
            for name in kept:
                with contextlib.suppress(FileNotFoundError):
                    (own / name).rmdir()  # the empty place made for it
                _copy_tree_now(installed / name, own / name)
    return kept


def copy_room(root: Path, dest: Path, label: str, uid: int | None) -> Path:
    """A copy's fresh home (a new user's: local_home.py) and, where the run
    is isolated, its own reports folder, both the run's uid's."""
    home = dest.parent / f"{dest.name}-home"
    home.mkdir()
    furnish(home, uid)
    if uid is not None:
        (root / "reports" / label).mkdir()
        os.chown(root / "reports" / label, uid, uid)
    return home


@contextlib.contextmanager
def swapped_in(canonical: Path, source: Path, parked: Path) -> Iterator[None]:
    """Swap mode: the copy's tree stands at the original's path for one
    command, the original parked beside it, and both go back however the
    command ends."""
    canonical.rename(parked)
    source.rename(canonical)
    try:
        yield
    finally:
        canonical.rename(source)
        parked.rename(canonical)


def _environment(installed: Path, names: tuple[str, ...]) -> tuple[str, ...]:
    """The environment folders the install made: real folders only. One the
    install left as a link (to the host's /etc, to the state directory) is
    the install's failure, said before anything is shown through it."""
    found = []
    for name in names:
        try:
            info = os.lstat(installed / name)
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(info.st_mode):
            raise BackendError(
                f"the install left {name} as something other than a folder (a link?): "
                "it is not handed on to the test runs"
            )
        found.append(name)
    return tuple(found)


def _make_room(fresh: Path, names: tuple[str, ...], kept: tuple[str, ...]) -> None:
    """Whatever head's tree holds at an environment folder's place goes (the
    environment comes from the install, never from git); an empty folder
    stands where the environment will be shown."""
    for name in names:
        target = fresh / name
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            shutil.rmtree(target)
        if name in kept:
            target.mkdir()


def _copy_tree_now(source: Path, dest: Path) -> None:
    done = subprocess.run(["cp", "-a", "--reflink=auto", str(source), str(dest)], capture_output=True)
    if done.returncode != 0:
        raise BackendError(f"local backend could not copy the workspace: {done.stderr.decode().strip()}")


def chown_tree(paths: tuple[Path, ...], uid: int) -> None:
    for top in paths:
        os.lchown(top, uid, uid)
        for folder, dirs, files in os.walk(top):
            for name in (*dirs, *files):
                os.lchown(os.path.join(folder, name), uid, uid)
