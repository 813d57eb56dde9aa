"""A local run's workspace: its commands, its files, its copies, its end.

Every command sees an allowlisted environment only (`scrubbed_env`). As
root it runs as the run's own uid in private namespaces (isolation.py
wraps it); otherwise it runs at the canonical path directly (the original),
in a mount namespace that shows its copy there (overlay, bind), or with its
copy swapped into place under the run's lock (swap). Where the trees lie is
local_layout.py's; this module is what is done with them.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from gatetui.backends.base import CommandResult, OutputSink, TreeExporter, Workspace
from gatetui.backends.confine import Where, wrap
from gatetui.backends.local_files import read_regular, write_files
from gatetui.backends.local_layout import (
    BIND_SCRIPT,
    OVERLAY_SCRIPT,
    UNSHARE,
    Copy,
    Layout,
    copy_room,
    lay_out,
    swapped_in,
)
from gatetui.backends.process import run_process, to_the_end
from gatetui.backends.uids import UidPool, kill_uid

ENV_ALLOW = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "SOURCE_DATE_EPOCH",
    # where Go fetches modules from, as pip's and npm's index settings are passed on
    "GOPROXY",
    "GOSUMDB",
    "GONOSUMDB",
    "GOPRIVATE",
    "GONOPROXY",
    "GOINSECURE",
)
ENV_ALLOW_PREFIXES = ("PIP_", "NPM_CONFIG_", "npm_config_", "UV_INDEX", "UV_DEFAULT_INDEX")
ENV_NEVER = ("RUNTIME_API_KEY", "PIP_PROXY", "NPM_CONFIG__AUTH", "npm_config__auth")


def scrubbed_env(home: Path, tmp: Path | None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Only what installs and tests need: never the supervisor's secrets,
    and no variable a person's shell or a CI job would not have (no
    NO_COLOR, no PYTHONUNBUFFERED: output is a pipe's either way), so that
    library code finds no sign of the gate to take its right path by.
    TMPDIR only where the run's temporary folder is not the ordinary /tmp
    (`tmp`: where the run has no private /tmp of its own)."""
    env = {k: v for k, v in os.environ.items() if k in ENV_ALLOW or k.startswith(ENV_ALLOW_PREFIXES)}
    for key in ENV_NEVER:
        env.pop(key, None)
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    env["HOME"] = str(home)
    if tmp is not None:
        env["TMPDIR"] = str(tmp)
    env.update(extra or {})
    return env


class LocalWorkspace(Layout):
    """The install's workspace or one of its copies: a Layout with its
    commands. Copies share the run's uid, lock and drawn paths: one run is
    one uid, killed and released when the original closes."""

    def __init__(
        self,
        root: Path,
        source: Path,
        label: str,
        mode: str,
        lock: asyncio.Lock,
        uid: int | None = None,
        pool: UidPool | None = None,
        copy: Copy | None = None,
        where: Where | None = None,
    ):
        super().__init__(root, source, label, mode, uid, copy, where)
        self._pool = pool
        self._lock = lock  # shared by a family of copies: swap mode runs one at a time
        self._forks = 0
        self._closed = False

    async def read_report(self, name: str) -> bytes | None:
        folder = self.reports if self.uid is not None else self.root / "reports"
        return await asyncio.to_thread(read_regular, folder, self._report_name(name))

    async def run(
        self,
        command: str,
        *,
        timeout: float,
        on_output: OutputSink,
        env: Mapping[str, str] | None = None,
        network: bool = True,
    ) -> CommandResult:
        if self.uid is not None:
            return await self._run_isolated(command, env, timeout, on_output, network)
        full_env = scrubbed_env(self.copy.home if self.copy else self.root / "home", self.root / "tmp", env)
        if self.mode == "swap":
            async with self._lock:  # the original's path holds one tree at a time
                return await self._run_swapped(command, full_env, timeout, on_output)
        if self.is_original:
            return await self._run_here(command, full_env, timeout, on_output)
        script = OVERLAY_SCRIPT if self.mode == "overlay" else BIND_SCRIPT
        lower = str(self.copy.lower) if self.copy is not None else ""
        argv = [*UNSHARE, "--", "/bin/sh", "-c", script, str(self.source), str(self.canonical), command, lower]
        return await run_process(argv, cwd=str(self.root), env=full_env, timeout=timeout, on_output=on_output)

    async def _run_isolated(
        self, command: str, env: Mapping[str, str] | None, timeout: float, on_output: OutputSink, network: bool
    ) -> CommandResult:
        assert self.uid is not None
        full_env = scrubbed_env(Path(self.where.home), None, env)  # its own /tmp
        argv = wrap(command, self.root, self._view(), uid=self.uid, network=network)
        return await run_process(argv, cwd=str(self.root), env=full_env, timeout=timeout, on_output=on_output)

    async def _run_here(
        self, command: str, env: dict[str, str], timeout: float, on_output: OutputSink
    ) -> CommandResult:
        return await run_process(
            ["/bin/sh", "-c", command], cwd=str(self.canonical), env=env, timeout=timeout, on_output=on_output
        )

    async def _run_swapped(
        self, command: str, env: dict[str, str], timeout: float, on_output: OutputSink
    ) -> CommandResult:
        if self.is_original:
            return await self._run_here(command, env, timeout, on_output)
        with swapped_in(self.canonical, self.source, self.root / "ws.parked"):
            return await self._run_here(command, env, timeout, on_output)

    async def write_files(self, files: Mapping[str, bytes | None]) -> None:
        whiteouts = self.mode == "overlay" and not self.is_original
        await asyncio.to_thread(write_files, self.files_root, files, whiteouts, self.uid)

    async def fork(
        self, count: int, export: TreeExporter, keep: tuple[str, ...] = (), network: bool = False
    ) -> list[Workspace]:
        """Copies for the test runs. Each shows a fresh export of the tree at
        the original's path, never what the install left in it; of the
        install's work only the `keep` folders (the environment) come along,
        read-only where the run is isolated, and each copy starts with a
        fresh home. The supervisor writes only into folders it just made.
        (`network` is decided per command here.)"""
        self._forks += 1
        fresh = self.root / f"fresh-{self._forks}"
        made: list[tuple[Path, str]] = []
        for _ in range(count):
            self._forks += 1
            made.append((self.root / f"copy-{self._forks}", f"{self.label}-copy{self._forks}"))
        dests = [d for d, _ in made]
        kept = await to_the_end(
            asyncio.to_thread(lay_out, export, self.canonical, fresh, keep, dests, self.mode, self.uid)
        )
        copies: list[Workspace] = []
        for dest, label in made:
            home = copy_room(self.root, dest, label, self.uid)
            copy = LocalWorkspace(
                self.root, dest, label, self.mode, self._lock, self.uid, self._pool, Copy(fresh, home, kept), self.where
            )
            # the environment links to the layer: every copy sees it where it was
            copy.deps, copy.deps_at = self.deps, self.deps_at
            copies.append(copy)
        return copies

    async def show_layer(self, folder: Path, at: str = "") -> str:
        return self.layer_path(folder, at)

    async def close(self) -> None:
        """The original's close ends the run: no process of its uid survives.
        A second close does nothing (its uid may belong to another run by then)."""
        if self._closed:
            return
        self._closed = True
        if self.copy is not None:
            await asyncio.to_thread(shutil.rmtree, self.source, True)
            await asyncio.to_thread(shutil.rmtree, self.copy.home, True)
            return
        if self.uid is not None:
            await asyncio.to_thread(kill_uid, self.uid)
        await asyncio.to_thread(shutil.rmtree, self.root, True)
        if self.uid is not None and self._pool is not None:
            self._pool.release(self.uid)
