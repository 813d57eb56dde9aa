"""The local backend's dependency layers: built once per resolved set, kept
by the supervisor, verified at every use.

A layer is `ROOT/<key>/env` (the environment folder a build made, the
supervisor's and read-only), `cache` beside it where the stack makes one
(its bytecode, keyed by path), `manifest.json` (every entry of both: its
kind, mode and sha256; the layer's digest is this file's), `info.json` (what it
holds, its size, when built) and `used` (its mtime: the last use). ROOT is
the supervisor's state directory's `layers/` (serve, the TUI) or a cache
folder (`gatetui check`: GATETUI_CACHE_DIR, else $XDG_CACHE_HOME/gatetui),
0700: a sandbox reaches a layer only through the read-only mount its run
is given. A layer that no longer matches its manifest is thrown away and
built again; one key's build lock (`locks/<key>.build`, flock) makes two
gates that race for it build it once, and its use lock (`locks/<key>.use`),
held shared by every run in progress that uses it, keeps a prune from
removing it under a run.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import re
import secrets
import shlex
import stat
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gatetui.backends.base import BuiltLayer, Found, LayerBuild, TreeExporter, Workspace
from gatetui.backends.layer_files import (
    differing,
    digest_of,
    manifest,
    remove_tree,
    seal_tree,
    size_of,
    take_out,
    write_plain,
)
from gatetui.backends.process import to_the_end
from gatetui.errors import BackendError, BadInput

KEY = re.compile(r"^[0-9a-f]{64}$")
ENV = "env"
CACHE = "cache"
POLL = 0.05  # seconds between tries of a busy lock (a wait, never a test's sleep)
DEFAULT_CAP = 20 << 30
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
Opener = Callable[[TreeExporter, str], Awaitable[Workspace]]
Folder = Callable[[Workspace, str], Path]


@dataclass(frozen=True)
class LayerInfo:
    """One kept layer, as `gatetui cache ls` shows it."""

    key: str
    size: int
    built: float
    used: float
    holds: tuple[str, ...]
    digest: str
    kind: str = "dependencies"  # or "build tools": what head's builds import (gate/install/build_tools.py)

    def to_json(self) -> dict[str, object]:
        return {
            "key": self.key,
            "size": self.size,
            "built": self.built,
            "used": self.used,
            "holds": list(self.holds),
            "digest": self.digest,
            "kind": self.kind,
        }


def default_cache_dir() -> Path:
    """Where `gatetui check` keeps layers without a state directory."""
    named = os.environ.get("GATETUI_CACHE_DIR", "")
    if named:
        return Path(named)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gatetui"


def cap_from_env() -> int:
    """GATETUI_LAYER_CAP: the layers' total size before the least recently
    used go (a number of bytes, or with K, M, G or T); default 20G."""
    text = os.environ.get("GATETUI_LAYER_CAP", "").strip().upper().removesuffix("B").removesuffix("I")
    if not text:
        return DEFAULT_CAP
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)", text)
    if match is None:
        raise BadInput(
            f"GATETUI_LAYER_CAP={os.environ['GATETUI_LAYER_CAP']!r} is not a size "
            "(bytes, or a number with K, M, G or T: 20G)"
        )
    return int(float(match.group(1)) * UNITS[match.group(2)])


def open_root(root: Path) -> Path:
    """The layers' folder: made 0700, refused when it is another user's."""
    root = root.absolute()
    try:
        for folder in [*reversed(root.parents), root]:  # every folder made here private (a state directory's too)
            if not folder.exists():
                folder.mkdir(mode=0o700)
        info = root.lstat()
    except OSError as err:
        raise BadInput(
            f"cannot use {root} for dependency layers: {err.strerror} (set GATETUI_CACHE_DIR or pass --state-dir)"
        ) from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise BadInput(
            f"{root} is not a folder of your own: dependency layers are not kept there "
            "(set GATETUI_CACHE_DIR or pass --state-dir)"
        )
    if stat.S_IMODE(info.st_mode) != 0o700:
        root.chmod(0o700)
    return root


class LayerShelf:
    """The kept layers as `gatetui cache` lists and removes them; a busy
    layer (held by a run, or being built) is never removed."""

    def __init__(self, root: Path, cap: int | None = None):
        self.root = root.absolute()  # shown to sandboxes by this path: never relative to a cwd
        self.cap = cap_from_env() if cap is None else cap

    @property
    def where(self) -> str:
        """How a listing names where these layers are kept."""
        return str(self.root)

    def _ready(self) -> Path:
        open_root(self.root)
        (self.root / "locks").mkdir(exist_ok=True, mode=0o700)
        return self.root

    def _lock_fd(self, key: str, what: str) -> int:
        """A key's lock: `build` (exclusive: one gate finds or builds at a
        time) or `use` (shared by the runs using the layer). Apart, so that
        a run using a layer never keeps another gate (or its own install of
        base) from finding it; removing one takes both."""
        if not KEY.match(key):
            raise BackendError(f"not a layer key: {key[:80]!r}")
        return os.open(self._ready() / "locks" / f"{key}.{what}", os.O_RDWR | os.O_CREAT, 0o600)

    def listing(self) -> list[LayerInfo]:
        if not self.root.is_dir():
            return []
        found = []
        for folder in sorted(self._ready().iterdir()):
            if not KEY.match(folder.name) or not folder.is_dir():
                continue
            try:
                info = json.loads((folder / "info.json").read_text())
                used = (folder / "used").stat().st_mtime
                digest = digest_of(json.loads((folder / "manifest.json").read_text()))
            except (OSError, ValueError):
                continue
            holds = tuple(str(item) for item in info.get("holds", ()))
            kind = str(info.get("kind") or "dependencies")
            found.append(
                LayerInfo(folder.name, int(info.get("size", 0)), float(info.get("built", 0)), used, holds, digest, kind)
            )
        return found

    def remove(self, key: str) -> bool:
        """Remove one layer unless a gate holds or builds it; whether it went."""
        fds = [self._lock_fd(key, "build"), self._lock_fd(key, "use")]
        try:
            try:
                for fd in fds:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            remove_tree(self.root / key)
            return True
        finally:
            for fd in fds:
                os.close(fd)

    def evict(self, keep: str = "") -> list[str]:
        """The least recently used layers removed until the rest fit the cap."""
        layers = sorted(self.listing(), key=lambda layer: layer.used)
        total = sum(layer.size for layer in layers)
        gone = []
        for layer in layers:
            if total <= self.cap:
                break
            if layer.key != keep and self.remove(layer.key):
                total -= layer.size
                gone.append(layer.key)
        return gone

    def prune(self, older_than_days: float | None) -> tuple[list[str], list[str]]:
        """Layers unused for longer than the days given (all when None)
        removed: (removed keys, busy keys left)."""
        limit = None if older_than_days is None else time.time() - older_than_days * 86400
        gone: list[str] = []
        busy: list[str] = []
        for layer in self.listing():
            if limit is None or layer.used < limit:
                (gone if self.remove(layer.key) else busy).append(layer.key)
        return gone, busy


class LocalLayers(LayerShelf):
    """The LayerStore of the local backend (backends/base.py)."""

    def __init__(self, root: Path, opener: Opener, folder_of: Folder, cap: int | None = None):
        super().__init__(root, cap)
        self.opener, self.folder_of = opener, folder_of
        self._interpreters: dict[tuple[str, ...], str] = {}

    keeps_cache = True
    moves_to_show = False

    async def interpreter(self, argv: tuple[str, ...], near: Workspace) -> str:
        """Asked once per backend, in a sandbox holding nothing (the runs'
        interpreter is the one their PATH finds there, not the supervisor's)."""
        if argv not in self._interpreters:
            said: list[str] = []
            workspace = await self.opener(lambda dest: dest.mkdir(), "layer-interpreter")
            try:
                done = await workspace.run(shlex.join(argv), timeout=60, on_output=said.append, network=False)
            finally:
                await to_the_end(workspace.close())  # a cancel waits for it: no folder is left
            if not done.ok:
                raise BackendError(f"`{argv[0]}` does not run in the sandbox: no dependency layer can be keyed")
            self._interpreters[argv] = "".join(said).strip()
        return self._interpreters[argv]

    @contextlib.asynccontextmanager
    async def claim(self, key: str) -> AsyncIterator[None]:
        fd = self._lock_fd(key, "build")
        try:
            await _flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    async def hold(self, key: str, layer: Path) -> Callable[[], None] | None:
        fd = self._lock_fd(key, "use")
        try:
            await _flock(fd, fcntl.LOCK_SH)
        except BaseException:
            os.close(fd)
            raise
        if not layer.is_dir():  # a prune between the claim and the hold took it
            os.close(fd)
            return None
        return lambda: os.close(fd)

    async def find(self, key: str) -> Found:
        return await asyncio.to_thread(self._find, key)

    def _find(self, key: str) -> Found:
        folder = self._ready() / key
        if not folder.is_dir():
            return Found(None)
        try:
            kept = json.loads((folder / "manifest.json").read_text())
        except (OSError, ValueError):
            kept = None
        now = layer_manifest(folder)
        if not isinstance(kept, dict) or kept != now:
            changed = differing(kept, now) if isinstance(kept, dict) else ["manifest.json"]
            remove_tree(folder)
            shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
            return Found(
                None,
                f"dependency layer {key[:12]} no longer matched its manifest ({shown}): thrown away and built again",
            )
        (folder / "used").touch()
        try:
            about = json.loads((folder / "info.json").read_text())
        except (OSError, ValueError):
            about = {}
        return Found(folder / ENV, about=about if isinstance(about, dict) else {})

    async def build(self, build: LayerBuild, near: Workspace) -> BuiltLayer:
        staging = self._ready() / f".build-{secrets.token_hex(6)}"
        staging.mkdir(mode=0o700)
        try:
            workspace = await self.opener(lambda dest: write_plain(dest, build.files), f"layer-{build.key[:12]}")
            try:
                if not await build.make(workspace):
                    return BuiltLayer(None)
                await asyncio.to_thread(take_out, self.folder_of(workspace, build.folder), staging / ENV)
                if build.cache:
                    await asyncio.to_thread(take_out, self.folder_of(workspace, build.cache), staging / CACHE)
            finally:
                await to_the_end(workspace.close())  # a cancel waits for it: no folder is left
            made = await asyncio.to_thread(self._keep, build.key, staging, build.verify, build.about)
        finally:
            await asyncio.to_thread(remove_tree, staging)
        if made.layer is not None:
            await asyncio.to_thread(self.evict, build.key)
        return made

    def _keep(
        self, key: str, staging: Path, verify: Callable[[str], list[str]], about: Mapping[str, object]
    ) -> BuiltLayer:
        seal_tree(staging / ENV)
        if (staging / CACHE).is_dir():
            seal_tree(staging / CACHE)
        problems = verify(str(staging / ENV))
        if problems:
            return BuiltLayer(None, tuple(problems))
        entries = layer_manifest(staging)
        (staging / "manifest.json").write_text(json.dumps(entries, sort_keys=True, separators=(",", ":")))
        size = size_of(staging / ENV) + (size_of(staging / CACHE) if (staging / CACHE).is_dir() else 0)
        info = {"key": key, "size": size, "built": time.time(), **about}
        (staging / "info.json").write_text(json.dumps(info))
        (staging / "used").touch()
        target = self.root / key
        remove_tree(target)
        os.rename(staging, target)
        return BuiltLayer(target / ENV)


def layer_manifest(folder: Path) -> dict[str, str]:
    """The manifest of a layer's folder: its environment's entries by
    their relative path, its cache's (when it has one) under `/cache`, a
    name no relative path can have."""
    entries = manifest(folder / ENV) if (folder / ENV).is_dir() else {}
    cache = folder / CACHE
    if cache.is_symlink():
        entries[f"/{CACHE}"] = "other"  # never made so: it matches no manifest written here
    elif cache.is_dir():
        entries[f"/{CACHE}"] = "dir"
        entries.update({f"/{CACHE}/{path}": entry for path, entry in manifest(cache).items()})
    return entries


async def _flock(fd: int, kind: int) -> None:
    """Take the lock, waiting for it without holding a thread (a cancel
    lands between tries)."""
    while True:
        try:
            fcntl.flock(fd, kind | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            await asyncio.sleep(POLL)
