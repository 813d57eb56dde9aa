"""The runs' sandboxes on Runtime: the install's environment taken out once,
and copies made fresh from the image, never forked from the install.

Runtime forks a sandbox whole (what the install left in /tmp, its home,
the image's own files, its processes), so the install's machine is never
copied: its `keep` folders leave it once as an archive the gate rewrites
(environment_archive), and the first run's sandbox, fresh and holding only
a fresh export and those folders, is the one forked for the others. An
install whose dependency layer is a snapshot moves onto a sandbox started
from it (move_onto), its tree rewritten the same way, and the runs start
from that snapshot. This is the trust rule of the runtime backend's test
runs, kept in one place apart from the workspace's commands
(runtime_workspace.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import tarfile
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from gatetui.backends.base import LayerUnavailable, close_all
from gatetui.backends.environment_archive import rewrite
from gatetui.backends.runtime_pack import pack_files
from gatetui.errors import BackendError

if TYPE_CHECKING:
    from gatetui.backends.runtime_workspace import RuntimeWorkspace


async def take_environment(install: RuntimeWorkspace, keep: tuple[str, ...]) -> bytes:
    """The kept folders as an archive made here and rewritten by the
    gate: made where head's code ran, so trusted for nothing."""
    if not keep:
        return rewrite(pack_files({}), keep).archive
    names = " ".join(shlex.quote(name) for name in keep)
    return await _taken(
        install,
        "the environment",
        keep,
        lambda packed: (
            f'set --; for n in {names}; do if [ -e "$n" ] || [ -L "$n" ]; then set -- "$@" "$n"; fi; '
            f"done; if [ $# -eq 0 ]; then tar -czf {packed} --files-from /dev/null; "
            f'else tar -czf {packed} -- "$@"; fi'
        ),
    )


async def move_onto(install: RuntimeWorkspace, snapshot: str) -> None:
    """The install, moved onto a sandbox started from a dependency layer's
    snapshot (RuntimeWorkspace.show_layer): its whole tree taken out and
    rewritten the same way, unpacked there by the image's tar, the old
    sandbox deleted; the runs' sandboxes will start from the snapshot too."""
    if install.fresh is None:
        raise BackendError(f"runtime backend: sandbox {install.sandbox.id} is a run's copy, not an install")
    tree = await _taken(install, "the installed tree", None, lambda packed: f"tar -czf {packed} .")
    try:
        moved = await install.fresh(True, snapshot)
    except BackendError as err:  # the install is as it was: it goes on without the layer
        raise LayerUnavailable(f"no sandbox could start from snapshot {snapshot} ({err})") from None
    old, install.sandbox = install.sandbox, moved
    try:
        await unpack(install, tree, install.path)
    except BackendError as err:
        install.sandbox = old
        await install.family.delete(moved.id)
        raise LayerUnavailable(f"the install could not move onto snapshot {snapshot} ({err})") from None
    await install.family.delete(old.id)
    install.snapshot = snapshot


async def _taken(
    install: RuntimeWorkspace, what: str, keep: tuple[str, ...] | None, command: Callable[[str], str]
) -> bytes:
    packed = f"{install.home}/taken-{os.urandom(6).hex()}.tar.gz"
    done = await install.run(command(packed), timeout=600, on_output=lambda _: None)
    raw = await install.read_report_at(packed) if done.ok else None
    if raw is None:
        raise BackendError(
            f"runtime backend: could not take {what} out of sandbox {install.sandbox.id} "
            f"({done.describe_end()}): {done.output_tail[-300:]}"
        )
    try:
        rewritten = await asyncio.to_thread(rewrite, raw, keep)
    except (tarfile.TarError, EOFError, OSError) as err:
        raise BackendError(f"runtime backend: {what} sandbox {install.sandbox.id} gave is no archive ({err})") from None
    if rewritten.left_out:
        install.family.progress(
            f"runtime: left out of {what} ({len(rewritten.left_out)}): {'; '.join(rewritten.left_out[:5])}"
        )
    return rewritten.archive


async def make_copies(
    install: RuntimeWorkspace, fresh: Callable[[], Awaitable[Any]], count: int, tree: bytes, environment: bytes
) -> list[RuntimeWorkspace]:
    """`count` workspaces for the runs: one fresh sandbox filled, then
    forked for the rest, so every copy holds the same bytes."""
    family = install.family
    reserved, alive = family.reserved, len(family.live)
    if reserved is not None and alive + count > reserved:
        raise BackendError(
            f"runtime backend: {count} sandboxes for the runs would make {alive + count} at "
            f"once; the cap leaves this run {reserved}"
        )
    first = install.copy_of(await fresh())
    made = [first]
    try:
        await fill(first, tree, environment)
        if count > 1:
            try:
                forks = await first.sandbox.fork(count - 1, labels=family.run_labels)
            except Exception as err:
                raise first.error(err, f"forking {count - 1} copies") from None
            for copy in forks:
                family.live[copy.id] = copy
                made.append(install.copy_of(copy))
    except BaseException:  # the caller never gets them: they are closed here
        with contextlib.suppress(Exception):  # the first error is the one to tell
            await close_all(made)
        raise
    return made


async def fill(copy: RuntimeWorkspace, tree: bytes, environment: bytes) -> None:
    """A fresh sandbox's tree: the export, then the environment, unpacked
    by the image's own tar (nothing of head's has run here)."""
    try:
        await copy.sandbox.files.unarchive(copy.path, tree, gzip=True)
    except Exception as err:
        raise copy.error(err, "unpacking a fresh tree") from None
    await unpack(copy, environment, copy.path)


async def unpack(copy: RuntimeWorkspace, archive: bytes, into: str) -> None:
    """An archive the gate rewrote, unpacked `into` a folder of the tree
    by the image's own tar, before anything of head's runs there."""
    name = f"unpack-{os.urandom(6).hex()}.tar.gz"
    try:
        await copy.sandbox.files.unarchive(copy.home, pack_files({name: archive}), gzip=True)
    except Exception as err:
        raise copy.error(err, "unpacking into a fresh sandbox") from None
    done = await copy.run(
        f"tar -xzf {copy.home}/{name} --no-same-owner -C {shlex.quote(into)} && rm -f {copy.home}/{name}",
        timeout=600,
        on_output=lambda _: None,
    )
    if not done.ok:
        raise BackendError(
            f"runtime backend: could not unpack in sandbox {copy.sandbox.id} "
            f"({done.describe_end()}): {done.output_tail[-300:]}"
        )
