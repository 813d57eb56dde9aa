"""The gate on Runtime microVMs, through the `withruntime` SDK.

A run gets one sandbox, created with a time limit, labels (app, run, the
supervisor's host and pid, when it started, and whatever the caller adds:
repo, branch) and network limited to the package index the user's pip or npm
is set up with. Head's tree is exported here, packed and uploaded, so the
sandbox needs no clone host. The install runs once; the runs never share its
machine: its environment leaves it once, rewritten by the gate, and each
fork is a sandbox made fresh from the image (see RuntimeWorkspace.fork).
Output streams through the SDK's streamed exec, which follows a cut stream
from its cursor by itself.

Every sandbox of a run is deleted when its workspaces close, and the run's
label is swept as well, which catches a sandbox whose create answer was lost
to a cancel. At the first preflight, sandboxes that a crashed supervisor left
(its pid dead on this host, or older than `stale_after`) are deleted.

The key is the SDK's business (RUNTIME_API_KEY or its saved login): this
module never reads it, never passes it into a sandbox, and scrubs it from
every error line. `withruntime` is imported lazily: the local backend never
needs it.

This module is the backend: its settings, the preflight (the key checked by
a sweep of crash leftovers, the package indexes found), the account's
credit, and the making of each sandbox. A workspace's commands, files and
reports are in runtime_workspace.py, the runs' sandboxes (the environment
taken out once, fresh copies, forks) in runtime_forks.py, the packing of
what is uploaded in runtime_pack.py; the cap, the errors, a run's cleanup
and its network are in runtime_admission, runtime_errors, runtime_family
and runtime_network.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gatetui.backends.base import ProgressSink, TreeExporter
from gatetui.backends.process import pid_alive
from gatetui.backends.runtime_admission import SandboxCap, cap_from_env, shared_cap
from gatetui.backends.runtime_errors import backend_error, is_sdk_error, one_line
from gatetui.backends.runtime_family import RunFamily
from gatetui.backends.runtime_family import sdk as _sdk
from gatetui.backends.runtime_layers import RuntimeLayers
from gatetui.backends.runtime_network import IndexAccess, index_access
from gatetui.backends.runtime_pack import upload_tree
from gatetui.backends.runtime_workspace import RuntimeWorkspace
from gatetui.errors import BackendError

__all__ = ["APP", "RuntimeBackend", "RuntimeSettings", "RuntimeWorkspace", "abandoned", "memory_of", "prepare"]

APP = {"app": "gatetui"}


@dataclass(frozen=True)
class RuntimeSettings:
    """Limits of a run's sandboxes; the defaults suit a real account."""

    sandbox_seconds: int = 3600  # each sandbox's time limit (Runtime deletes it then)
    capacity_wait: float = 120.0  # how long a create waits for room before giving up
    start_seconds: int = 60  # how long a created sandbox may take to run
    command_grace: float = 60.0  # past a command's limit, before we stop waiting for Runtime
    stale_after: float = 6 * 3600  # a labelled sandbox older than this is a leftover
    memory_mib: int | None = None  # None: the account's default size
    layers: bool = False  # keep dependency layers as snapshots on the account (runtime_layers.py)
    # sandboxes alive at once over every run of this process (None: no cap); see runtime_admission
    max_sandboxes: int | None = field(default_factory=cap_from_env)


def _label_value(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", text)[:63] or "-"


class RuntimeBackend:
    name = "runtime"
    measured = True  # durations, CPU and memory as Runtime reports and bills them
    isolation = None  # sandboxes are machines of their own: nothing of this machine's to report

    def __init__(
        self,
        *,
        labels: Mapping[str, str] | None = None,
        settings: RuntimeSettings | None = None,
        on_progress: ProgressSink | None = None,
        cap: SandboxCap | None = None,
    ):
        self.labels = {k: _label_value(v) for k, v in (labels or {}).items()}
        self.settings = settings or RuntimeSettings()
        self.cap = cap or shared_cap(self.settings.max_sandboxes)
        self.on_progress = on_progress or (lambda line: None)
        # a dependency layer is a snapshot on the account; None: every gate installs cold
        self.layers: RuntimeLayers | None = RuntimeLayers(self.client) if self.settings.layers else None
        self.host = _label_value(socket.gethostname())
        self._tools: tuple[tuple[str, ...], ...] = ()
        self._indexes: tuple[str, ...] = ()
        self._access: IndexAccess | None = None
        self._swept = False
        self.swept_ids: list[str] = []

    @property
    def notes(self) -> tuple[str, ...]:
        access = self._access
        hosts = "only the package index" if access is None else ", ".join(access.hosts) or "no host"
        notes = [
            f"runtime backend: sandboxes reach {hosts} (the package index from your pip, npm or go setup)",
            "runtime backend: the test runs get sandboxes of their own, made with no network",
        ]
        if self.layers is not None:
            notes.append(
                f"runtime backend: dependency layers are kept as snapshots on your account for "
                f"{self.layers.retention_days} days from their last use "
                "(`gatetui cache ls|prune --backend runtime`)"
            )
        return tuple(notes + list(access.notes if access else ()))

    def client(self) -> Any:
        """A client of its own per run: its connections belong to one loop."""
        try:
            return _sdk().AsyncRuntime(wait_for_capacity=self.settings.capacity_wait)
        except Exception as err:  # a malformed key is refused on construction
            raise backend_error(err, "connecting to Runtime") from None

    async def preflight(self, tools: tuple[tuple[str, ...], ...], indexes: tuple[str, ...] = ()) -> None:
        """Check the key by listing this app's sandboxes (deleting crash
        leftovers, once), and find the package indexes (the stack's: "pip",
        "npm", "go") the sandbox may reach."""
        self._tools, self._indexes = tools, indexes
        self.cap.check()  # a cap no run fits under is said before any sandbox is made
        sweep = self._sweep_once()
        access = index_access(frozenset(indexes))
        # Both finish before an error is raised: no subprocess outlives it.
        swept, found = await asyncio.gather(sweep, access, return_exceptions=True)
        for outcome in (swept, found):
            if isinstance(outcome, BaseException):
                raise outcome
        assert isinstance(found, IndexAccess)
        self._access = found

    async def account(self) -> dict[str, float]:
        """The account's credit in dollars, as Runtime reports it (integer
        microdollars in strings), for the credit table."""
        client = self.client()
        try:
            usage = await client.usage()
        finally:
            await client.close()
        return {
            key: int(usage[key]) / 1_000_000
            for key in ("available", "spent", "held")
            if str(usage.get(key, "")).lstrip("-").isdigit()
        }

    async def _sweep_once(self) -> None:
        if self._swept:
            return
        client = self.client()
        try:
            page = await client.sandboxes.list(labels=APP, include_stopped=True)
            stale_after = self.settings.stale_after
            leftovers = [s async for s in page if abandoned(s.info.get("labels") or {}, self.host, stale_after)]
            for sandbox in leftovers:
                with contextlib.suppress(Exception):
                    await client.sandboxes.delete(sandbox.id)
                    self.swept_ids.append(sandbox.id)
        except Exception as err:
            if is_sdk_error(err):
                raise backend_error(err, "listing this app's sandboxes") from None
            raise
        finally:
            await client.close()
        self._swept = True
        if self.swept_ids:
            self.on_progress(f"runtime: deleted {len(self.swept_ids)} sandbox(es) left by a crashed run")

    async def open(self, export: TreeExporter, label: str) -> RuntimeWorkspace:
        if self._access is None:
            await self.preflight(self._tools, self._indexes)
        assert self._access is not None
        run = _label_value(label)
        ticket = await self.cap.admit(self.on_progress)  # the whole run's sandboxes, or wait
        try:
            family = RunFamily(
                self.client(),
                {**APP, "run": run},
                self.on_progress,
                dict(self._access.env),
                self.settings.command_grace,
                ticket,
            )
        except BaseException:
            ticket.release()
            raise
        try:
            sandbox = await self._create(family, run)
            home = await prepare(sandbox, self._tools)
            await upload_tree(sandbox, export, f"{home}/repo")
            return RuntimeWorkspace(
                family,
                sandbox,
                home,
                "install",
                memory_of(sandbox, self.settings),
                fresh=lambda network, snapshot: self._fresh(family, run, home, network, snapshot),
                layers=self.layers,
            )
        except BaseException as err:
            await asyncio.shield(family.abandon())
            if is_sdk_error(err):
                raise backend_error(err, "starting the sandbox") from None
            raise

    async def _fresh(self, family: RunFamily, run: str, home: str, network: bool, snapshot: str | None) -> Any:
        """A sandbox for the test runs, made from the image (or a dependency
        layer's snapshot: nothing of head's is in one), with no network
        unless base's config gives the runs the install's: nothing of head's
        has run in it, nor will before its forks are made."""
        sandbox = await self._create(family, run, network=None if network else {"internet": False}, snapshot=snapshot)
        if await prepare(sandbox, self._tools) != home:
            raise BackendError(
                f"runtime backend: sandbox {sandbox.id} has another home than the install's; use --backend local"
            )
        return sandbox

    async def _create(
        self, family: RunFamily, run: str, network: dict[str, Any] | None = None, snapshot: str | None = None
    ) -> Any:
        assert self._access is not None
        labels = {
            **APP,
            **self.labels,
            "run": run,
            "host": self.host,
            "pid": str(os.getpid()),
            "started": str(int(time.time())),
        }
        give_up = time.monotonic() + self.settings.capacity_wait

        def countdown(err: Any, seconds: float) -> None:
            left = max(0.0, give_up - time.monotonic())
            self.on_progress(
                f"runtime: no room for a sandbox ({err.code}); trying again in "
                f"{seconds:.1f} s, giving up in {left:.0f} s"
            )

        sandbox = await family.client.sandboxes.create(
            wait=False,
            labels=labels,
            timeout_seconds=self.settings.sandbox_seconds,
            network=self._access.network() if network is None else network,
            on_lease_end="delete",
            on_capacity_wait=countdown,
            memory_mib=self.settings.memory_mib,
            snapshot_id=snapshot,
        )
        family.live[sandbox.id] = sandbox
        if sandbox.state != "running":
            await sandbox.wait_for("running", self.settings.start_seconds)
        if sandbox.state != "running":
            raise BackendError(
                one_line(
                    f"runtime backend: sandbox {sandbox.id} did not start: still {sandbox.state or 'unknown'} "
                    f"after {self.settings.start_seconds} s (it was deleted); try again, or use --backend local"
                )
            )
        return sandbox


def abandoned(labels: Mapping[str, str], host: str, stale_after: float) -> bool:
    """Left by a run that cannot delete it any more: its supervisor's pid
    is dead on this host, or it is older than any run lasts."""
    started = labels.get("started", "")
    if started.isdigit() and time.time() - int(started) > stale_after:
        return True
    pid = labels.get("pid", "")
    return labels.get("host") == host and pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid))


async def prepare(sandbox: Any, tools: tuple[tuple[str, ...], ...]) -> str:
    """The sandbox's home (its default cwd), and every tool the install
    needs, checked in one command."""
    checks = "".join(
        f"{shlex.join(argv)} >/dev/null 2>&1 || echo missing: {shlex.quote(shlex.join(argv))}\n" for argv in tools
    )
    done = await sandbox.exec(f'printf "home: %s\\n" "$PWD"\nmkdir -p reports\n{checks}', timeout_ms=60_000)
    lines = done.stdout.splitlines()
    missing = [line.removeprefix("missing: ") for line in lines if line.startswith("missing: ")]
    if missing:
        raise BackendError(
            f"runtime backend: `{missing[0]}` does not run in the sandbox "
            f"(its image lacks {missing[0].split()[0]}): use --backend local"
        )
    homes = [str(line).removeprefix("home: ") for line in lines if line.startswith("home: ")]
    if not homes or not homes[0].startswith("/"):
        raise BackendError(f"runtime backend: the sandbox did not say its home: {one_line(done.stderr)[:200]}")
    return homes[0]


def memory_of(sandbox: Any, settings: RuntimeSettings) -> int:
    """What Runtime bills per second the sandbox runs: its own size, else the size asked for."""
    mib = sandbox.info.get("memoryMiB") or settings.memory_mib or 0
    return int(mib) * 2**20
