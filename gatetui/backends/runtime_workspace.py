"""A workspace on Runtime: one sandbox, its commands, files and reports.

Output streams through the SDK's streamed exec, which follows a cut stream
from its cursor by itself; a command's wall time is Runtime's figure and
its CPU time the shell's `times` inside the sandbox. The install's
workspace is spent at its first fork (runtime_forks.py makes the runs'
sandboxes); a workspace's close deletes its sandbox and, with the last of
its family, sweeps the run (runtime_family.py).
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gatetui.backends.base import CommandResult, OutputSink, TreeExporter, Workspace
from gatetui.backends.process import OutputTail
from gatetui.backends.runtime_errors import backend_error, is_sdk_error, not_found
from gatetui.backends.runtime_family import RunFamily
from gatetui.backends.runtime_forks import make_copies, move_onto, take_environment
from gatetui.backends.runtime_pack import pack_tree, write_over
from gatetui.errors import BackendError

if TYPE_CHECKING:
    from gatetui.backends.runtime_layers import RuntimeLayers

CPU_FILE = "reports/.times"  # beside the reports, not in the home a run lists: no sign of the gate there
TIMES = re.compile(r"(\d+)m([\d.]+)s")
Fresh = Callable[[bool, str | None], Awaitable[Any]]  # (network, a layer's snapshot) -> a new sandbox


class RuntimeWorkspace:
    """One sandbox holding the tree at `<home>/repo`, the same path in every fork."""

    def __init__(
        self,
        family: RunFamily,
        sandbox: Any,
        home: str,
        label: str,
        memory: int,
        fresh: Fresh | None = None,
        layers: RuntimeLayers | None = None,
    ):
        self.family, self.sandbox, self.home, self.label = family, sandbox, home, label
        self.memory = memory  # what Runtime bills while the sandbox runs
        self.fresh = fresh  # makes a sandbox for the runs; None: a copy, never forked
        self.layers = layers  # the backend's dependency layers (snapshots), when it keeps them
        self.snapshot: str | None = None  # the layer's snapshot this install and its runs start from
        self.ran = 0  # commands run here: none yet means nothing of head's has run on this machine
        self._closed = False
        self._forks = 0
        self.spent = False  # its environment was taken and its sandbox deleted at the first fork
        self._environment: tuple[tuple[str, ...], bytes] | None = None  # the kept folders, as rewritten
        family.open += 1

    @property
    def path(self) -> str:
        return f"{self.home}/repo"

    def report_path(self, name: str) -> str:
        return f"{self.home}/reports/{self.label}-{name}"

    def scratch_path(self, name: str) -> str:
        """Under /tmp with a name drawn now: a fork copies the install's /tmp."""
        return f"/tmp/{name}-{os.urandom(8).hex()}"

    async def read_report(self, name: str) -> bytes | None:
        self._usable()
        return await self.read_report_at(self.report_path(name), f"the report {name}")

    async def read_report_at(self, path: str, what: str = "") -> bytes | None:
        """None where the command wrote nothing: a missing report is the
        command's failure to tell, not the gate's."""
        try:
            data: bytes = await self.sandbox.files.read(path)
            return data
        except Exception as err:
            if not_found(err):
                return None
            raise self.error(err, f"reading {what or path}") from None

    def error(self, err: BaseException, doing: str) -> BaseException:
        return backend_error(err, f"{doing} in sandbox {self.sandbox.id}") if is_sdk_error(err) else err

    async def run(
        self,
        command: str,
        *,
        timeout: float,
        on_output: OutputSink,
        env: Mapping[str, str] | None = None,
        network: bool = True,
    ) -> CommandResult:
        """Stream the command's output, stderr into stdout inside the sandbox
        (one pipe keeps the order it was written in, as the local backend's
        does; two streams' chunks arrive in any order); its wall time is
        Runtime's figure, its CPU time the shell's `times` inside the sandbox."""
        self._usable()
        self.ran += 1
        tail = OutputTail()

        def sink(text: str) -> None:
            tail.add(text)
            on_output(text)

        wrapped = f"( {command}\n) 2>&1\n__rc=$?\ntimes > {self.home}/{CPU_FILE} 2>/dev/null\nexit $__rc"
        started = time.monotonic()
        try:
            result = await asyncio.wait_for(
                self.sandbox.exec(
                    wrapped,
                    cwd=self.path,
                    env={**self.family.env, **(env or {})},
                    timeout_ms=max(1000, int(timeout * 1000)),
                    on_stdout=sink,
                    on_stderr=sink,
                ),
                timeout + self.family.grace,
            )
        except TimeoutError:
            return CommandResult(
                None, time.monotonic() - started, timed_out=True, output_tail=tail.text(), dropped_bytes=tail.dropped
            )
        except asyncio.CancelledError:
            self.family.sweep_soon()  # the run is ending: see RunFamily
            raise
        except Exception as err:
            raise self.error(err, f"running `{command}`") from None
        wall = result.duration_ms / 1000 if result.duration_ms is not None else time.monotonic() - started
        return CommandResult(
            exit_code=result.exit_code,
            wall_seconds=wall,
            cpu_seconds=await _cpu_seconds(self.sandbox, self.home),
            peak_rss_bytes=self.memory,
            timed_out=result.timed_out,
            output_tail=tail.text(),
            dropped_bytes=tail.dropped,
        )

    async def write_files(self, files: Mapping[str, bytes | None]) -> None:
        self._usable()
        try:
            await write_over(self.sandbox, self.path, files)
        except BackendError:
            raise
        except Exception as err:
            raise self.error(err, "writing files") from None

    def _usable(self) -> None:
        if self.spent:
            raise BackendError(
                f"runtime backend: sandbox {self.sandbox.id} was deleted once its environment "
                "was taken for the runs: nothing runs on the install's machine after its fork"
            )

    async def fork(
        self, count: int, export: TreeExporter, keep: tuple[str, ...] = (), network: bool = False
    ) -> list[Workspace]:
        """`count` copies for the runs, none of them a fork of this sandbox:
        Runtime copies a sandbox whole (what the install left in /tmp, its
        home, the image's own files, processes), so the runs start from a
        sandbox made fresh from the image (offline unless `network`: Runtime
        sets it per sandbox), holding a fresh export
        and the `keep` folders. Those leave this sandbox once, at its first
        fork, as an archive the gate rewrites (environment_archive); then this
        sandbox is deleted. Every fork hands on the same bytes."""
        fresh = self.fresh
        if fresh is None:
            raise BackendError(f"runtime backend: sandbox {self.sandbox.id} is a run's copy, not an install")
        if self._environment is None:
            self._usable()
            self._environment = (keep, await take_environment(self, keep))
            self.spent = True  # deleted now: the runs never see it, and its room under the cap goes to them
            await self.family.delete(self.sandbox.id)
        elif self._environment[0] != keep:
            raise BackendError("runtime backend: a fork asked for other folders than the first fork carried")
        tree = await asyncio.to_thread(pack_tree, export, keep)
        return list(await make_copies(self, lambda: fresh(network, self.snapshot), count, tree, self._environment[1]))

    def copy_of(self, sandbox: Any) -> RuntimeWorkspace:
        """A run's workspace on `sandbox`, under the next copy's label: each
        copy's reports have names of their own."""
        self._forks += 1
        return RuntimeWorkspace(self.family, sandbox, self.home, f"{self.label}-copy{self._forks}", self.memory)

    shows_in_tree = False  # no mounts: npm's layer (at node_modules) is not shown here

    async def show_layer(self, folder: Path, at: str = "") -> str:
        """A started sandbox takes no snapshot in: the install moves (runtime_forks.move_onto)."""
        snapshot = self.layers.snapshot_of(folder) if self.layers is not None else None
        if snapshot is None or at:
            raise BackendError(f"runtime backend: no snapshot holds the dependency layer {folder}")
        self._usable()
        await move_onto(self, snapshot)
        return str(folder)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if not self.spent:  # else it is gone already
                await self.family.delete(self.sandbox.id)
            await self.family.release()
        except asyncio.CancelledError:
            self.family.sweep_soon()
            raise


async def _cpu_seconds(sandbox: Any, home: str) -> float:
    """The children's user+system time that `times` wrote; 0 if none."""
    try:
        text = (await sandbox.files.read(f"{home}/{CPU_FILE}")).decode()
    except Exception:
        return 0.0
    lines = text.strip().splitlines()
    return sum(int(m) * 60 + float(s) for m, s in TIMES.findall(lines[-1])) if lines else 0.0
