"""Dependency layers on Runtime: each one a disk snapshot of the sandbox that built it.

A layer is built as on this machine (layer_steps.py), in a sandbox made
fresh from the image that holds nothing of head's but the lock files the
gate writes there; the folder the build made is then moved out of the tree
to a name drawn for it under the sandbox's home, the tree emptied, and the
sandbox kept as a disk snapshot named after the key (`gatetui-layer-KEY`,
labelled with that folder and what the build used), then deleted. A
snapshot cannot change once taken, so no later sandbox can poison it: a
gate whose key it is moves its install onto a sandbox started from it
(RuntimeWorkspace.show_layer), and the runs' sandboxes start from it too.
Whatever head's code does to its own copy stays in that sandbox.

What this store does not do that the local one does: the layer is not
checked against its distributions' RECORDs on the supervisor's machine
(it never comes here; it is built from the hashes the resolve pinned, in a
sandbox no code of head's ran in), its bytecode cache is not made (the runs'
sandboxes have no mounts to show it under each command's prefix), and two
supervisors racing for one key may both build it (one lock per key per
process): the next gate takes the first ready snapshot of that name.
Snapshots are kept `retention_days` (Runtime deletes them then).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import shlex
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from gatetui.backends.base import BuiltLayer, Found, LayerBuild, LayerUnavailable, Workspace
from gatetui.backends.runtime_errors import backend_error, is_sdk_error, one_line
from gatetui.backends.runtime_workspace import CPU_FILE, RuntimeWorkspace
from gatetui.errors import BackendError

PREFIX = "gatetui-layer-"
FOLDER = re.compile(r"^\.l[0-9a-f]{12}$")
RETENTION_DAYS = 30
USAGE = ("wall_seconds", "cpu_seconds", "gib_seconds")


class RuntimeLayers:
    """The LayerStore of the runtime backend (backends/base.py)."""

    keeps_cache = False
    moves_to_show = True

    def __init__(self, client: Callable[[], Any], retention_days: int = RETENTION_DAYS):
        self.client = client  # a fresh SDK client per call: its connections belong to one loop
        self.retention_days = retention_days
        self.home = ""  # the sandboxes' home, as the first one asked said it
        self._interpreters: dict[tuple[str, ...], str] = {}
        self._snapshots: dict[str, str] = {}  # a layer's path in the sandboxes -> its snapshot's id
        self._locks: dict[tuple[int, str], asyncio.Lock] = {}

    def snapshot_of(self, layer: Path) -> str | None:
        """The snapshot whose sandboxes hold the layer at `layer`."""
        return self._snapshots.get(str(layer))

    async def interpreter(self, argv: tuple[str, ...], near: Workspace) -> str:
        """Asked once per backend where nothing of head's has run: in the
        install's sandbox while it has run no command (outside its tree,
        which holds head's files), else in one made fresh from the image."""
        install = _install(near)
        if argv not in self._interpreters:
            said, ok = await (
                _ask_untouched(install, argv)
                if install.ran == 0 and install.fresh is not None
                else _ask_a_clean_machine(install, argv)
            )
            if not ok:
                raise BackendError(f"`{argv[0]}` does not run in the sandbox: no dependency layer can be keyed")
            self._interpreters[argv] = said.strip()
        self.home = install.home
        return self._interpreters[argv]

    @contextlib.asynccontextmanager
    async def claim(self, key: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault((id(asyncio.get_running_loop()), key), asyncio.Lock())
        async with lock:
            yield

    async def find(self, key: str) -> Found:
        client = self.client()
        try:
            page = await client.snapshots.list(name=PREFIX + key, state="ready")
            found = [snapshot async for snapshot in page]
        except Exception as err:
            if is_sdk_error(err):
                raise LayerUnavailable(str(backend_error(err, "looking for a dependency layer's snapshot"))) from None
            raise
        finally:
            await client.close()
        for snapshot in found:
            labels = snapshot.get("labels") or {}
            folder = str(labels.get("folder", ""))
            if snapshot.get("mode") == "disk" and FOLDER.match(folder) and self.home:
                layer = Path(f"{self.home}/{folder}")
                self._snapshots[str(layer)] = str(snapshot["id"])
                await self._extend(str(snapshot["id"]))
                return Found(layer, about={"build": _usage(labels)})
        return Found(None)

    async def _extend(self, taken: str) -> None:
        """A layer in use is kept its retention days from now (Runtime keeps
        no last use: this is how the ones gates still use outlive the rest).
        Best effort: a refusal costs the layer nothing today."""
        client = self.client()
        try:
            await client.snapshots.extend(taken, retention_days=self.retention_days)
        except Exception as err:
            if not is_sdk_error(err):
                raise
        finally:
            await client.close()

    async def build(self, build: LayerBuild, near: Workspace) -> BuiltLayer:
        """`make` in a fresh sandbox of the gate's run holding only `files`;
        the folder it made moved out of the tree, and the sandbox kept as
        a disk snapshot. `verify` and `cache` are not used here: the layer
        never comes to this machine to be verified, and no cache is kept
        (`keeps_cache`; see the module's docstring)."""
        try:
            return await self._build(build.key, build.folder, build.make, build.about, _install(near), build.files)
        except LayerUnavailable:
            raise
        except BackendError as err:  # no sandbox to build in, or none kept: the gate installs for itself
            raise LayerUnavailable(str(err)) from None

    async def _build(
        self,
        key: str,
        folder: str,
        make: Callable[[Workspace], Awaitable[bool]],
        about: Mapping[str, object],
        near: RuntimeWorkspace,
        files: Mapping[str, bytes],
    ) -> BuiltLayer:
        machine = await clean_machine(near, network=True)
        try:
            await machine.write_files(dict(files))
            if not await make(machine):
                return BuiltLayer(None)
            name = f".l{secrets.token_hex(6)}"
            # every sandbox started from the snapshot holds what is left: the layer, and an
            # empty tree and reports folder (no report of the build's could pass for a run's)
            moved = await machine.run(
                f"cd .. && mv -T -- repo/{shlex.quote(folder)} {name} && "
                f"rm -rf repo reports {CPU_FILE} taken-* unpack-* && mkdir repo reports",
                timeout=600,
                on_output=lambda _: None,
            )
            if not moved.ok:
                return BuiltLayer(None, (f"the layer's build left no {folder} folder ({moved.describe_end()})",))
            taken = await keep_as_snapshot(
                machine,
                PREFIX + key,
                {"app": "gatetui", "folder": name, **_labels(about.get("build"))},
                self.retention_days,
            )
        finally:
            await machine.close()
        self.home = machine.home
        layer = Path(f"{machine.home}/{name}")
        self._snapshots[str(layer)] = taken
        return BuiltLayer(layer)

    async def hold(self, key: str, layer: Path) -> Callable[[], None] | None:
        """Nothing prunes a snapshot under a run (Runtime keeps it its
        retention days): held while this store knows it."""
        return (lambda: None) if str(layer) in self._snapshots else None


async def clean_machine(install: RuntimeWorkspace, network: bool) -> RuntimeWorkspace:
    """A sandbox of the install's run made fresh from the image, holding
    nothing of head's (a dependency layer's build, the interpreter's answer)."""
    if install.fresh is None:
        raise BackendError(f"runtime backend: sandbox {install.sandbox.id} is a run's copy, not an install")
    machine = install.copy_of(await install.fresh(network, None))
    try:
        done = await machine.sandbox.exec(["mkdir", "-p", machine.path], timeout_ms=60_000)
    except Exception as err:
        await machine.close()
        raise machine.error(err, "making the tree's folder") from None
    if done.exit_code != 0:
        await machine.close()
        raise BackendError(f"runtime backend: could not make {machine.path}: {one_line(done.stderr)}")
    return machine


async def keep_as_snapshot(machine: RuntimeWorkspace, name: str, labels: dict[str, str], days: int) -> str:
    """The sandbox's disk, kept under `name`: the snapshot's id."""
    try:
        taken = await machine.sandbox.snapshot(name=name, labels=labels, retention_days=days, mode="disk")
    except Exception as err:
        raise machine.error(err, "keeping the dependency layer as a snapshot") from None
    return str(taken["id"])


async def _ask_untouched(install: RuntimeWorkspace, argv: tuple[str, ...]) -> tuple[str, bool]:
    try:
        done = await install.sandbox.exec(
            shlex.join(argv), cwd=install.home, env=dict(install.family.env), timeout_ms=60_000
        )
    except Exception as err:
        raise install.error(err, f"asking `{argv[0]}` for the layer's key") from None
    return str(done.stdout or ""), done.exit_code == 0


async def _ask_a_clean_machine(install: RuntimeWorkspace, argv: tuple[str, ...]) -> tuple[str, bool]:
    machine = await clean_machine(install, network=False)
    said: list[str] = []
    try:
        done = await machine.run(shlex.join(argv), timeout=60, on_output=said.append, network=False)
    finally:
        await machine.close()
    return "".join(said), done.ok


def _install(near: Workspace) -> RuntimeWorkspace:
    if not isinstance(near, RuntimeWorkspace):
        raise BackendError("the runtime backend's layers are made beside a runtime workspace only")
    return near


def _labels(build: object) -> dict[str, str]:
    """What the build used, as label values (strings)."""
    if not isinstance(build, Mapping):
        return {}
    return {
        name.split("_")[0]: f"{float(build[name]):.3f}" for name in USAGE if isinstance(build.get(name), (int, float))
    }


def _usage(labels: Mapping[str, object]) -> dict[str, float]:
    """The labels' figures back (layer_steps reads them with care)."""
    out = {}
    for name in USAGE:
        try:
            out[name] = float(str(labels.get(name.split("_")[0], "")))
        except ValueError:
            continue
    return out
