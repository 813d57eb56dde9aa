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
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
import shutil
import socket
import tarfile
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gatetui.backends.environment_archive import rewrite
from gatetui.backends.base import CommandResult, OutputSink, TreeExporter, Workspace, close_all
from gatetui.backends.process import OutputTail, pid_alive
from gatetui.backends.runtime_admission import SandboxCap, cap_from_env, shared_cap
from gatetui.backends.runtime_errors import backend_error, is_sdk_error, not_found, one_line
from gatetui.backends.runtime_family import ProgressSink, RunFamily, sdk as _sdk
from gatetui.backends.runtime_network import IndexAccess, index_access
from gatetui.errors import BackendError

APP = {"app": "gatetui"}
CPU_FILE = ".gatetui-cpu"
TIMES = re.compile(r"(\d+)m([\d.]+)s")


@dataclass(frozen=True)
class RuntimeSettings:
    """Limits of a run's sandboxes; the defaults suit a real account."""

    sandbox_seconds: int = 3600  # each sandbox's time limit (Runtime deletes it then)
    capacity_wait: float = 120.0  # how long a create waits for room before giving up
    start_seconds: int = 60  # how long a created sandbox may take to run
    command_grace: float = 60.0  # past a command's limit, before we stop waiting for Runtime
    stale_after: float = 6 * 3600  # a labelled sandbox older than this is a leftover
    memory_mib: int | None = None  # None: the account's default size
    # sandboxes alive at once over every run of this process (None: no cap); see runtime_admission
    max_sandboxes: int | None = field(default_factory=cap_from_env)


def _label_value(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", text)[:63] or "-"


class RuntimeBackend:
    name = "runtime"
    measured = True  # durations, CPU and memory as Runtime reports and bills them
    isolation = None  # sandboxes are machines of their own: nothing of this machine's to report

    def __init__(self, *, labels: Mapping[str, str] | None = None,
                 settings: RuntimeSettings | None = None, on_progress: ProgressSink | None = None,
                 cap: SandboxCap | None = None):
        self.labels = {k: _label_value(v) for k, v in (labels or {}).items()}
        self.settings = settings or RuntimeSettings()
        self.cap = cap or shared_cap(self.settings.max_sandboxes)
        self.on_progress = on_progress or (lambda line: None)
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
        notes = [f"runtime backend: sandboxes reach {hosts} (the package index from your pip/npm setup)",
                 "runtime backend: the test runs get sandboxes of their own, made with no network"]
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
        return {key: int(usage[key]) / 1_000_000 for key in ("available", "spent", "held")
                if str(usage.get(key, "")).lstrip("-").isdigit()}

    async def _sweep_once(self) -> None:
        if self._swept:
            return
        client = self.client()
        try:
            page = await client.sandboxes.list(labels=APP, include_stopped=True)
            leftovers = [s async for s in page if self._abandoned(s.info.get("labels") or {})]
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

    def _abandoned(self, labels: Mapping[str, str]) -> bool:
        """Left by a run that cannot delete it any more: its supervisor's pid
        is dead on this host, or it is older than any run lasts."""
        started = labels.get("started", "")
        if started.isdigit() and time.time() - int(started) > self.settings.stale_after:
            return True
        pid = labels.get("pid", "")
        return labels.get("host") == self.host and pid.isdigit() and int(pid) != os.getpid() \
            and not pid_alive(int(pid))

    async def open(self, export: TreeExporter, label: str) -> RuntimeWorkspace:
        if self._access is None:
            await self.preflight(self._tools, self._indexes)
        assert self._access is not None
        run = _label_value(label)
        ticket = await self.cap.admit(self.on_progress)  # the whole run's sandboxes, or wait
        try:
            family = RunFamily(self.client(), {**APP, "run": run}, self.on_progress, dict(self._access.env),
                               self.settings.command_grace, ticket)
        except BaseException:
            ticket.release()
            raise
        try:
            sandbox = await self._create(family, run)
            home = await self._prepare(sandbox)
            await _upload(sandbox, export, f"{home}/repo")
            return RuntimeWorkspace(family, sandbox, home, "install", self._memory(sandbox),
                                    fresh=lambda network: self._fresh(family, run, home, network))
        except BaseException as err:
            await asyncio.shield(family.abandon())
            if is_sdk_error(err):
                raise backend_error(err, "starting the sandbox") from None
            raise

    async def _fresh(self, family: RunFamily, run: str, home: str, network: bool) -> Any:
        """A sandbox for the test runs, made from the image, with no network
        unless base's config gives the runs the install's: nothing of head's
        has run in it, nor will before its forks are made."""
        sandbox = await self._create(family, run, network=None if network else {"internet": False})
        if await self._prepare(sandbox) != home:
            raise BackendError(f"runtime backend: sandbox {sandbox.id} has another home than the install's; "
                               "use --backend local")
        return sandbox

    async def _create(self, family: RunFamily, run: str, network: dict[str, Any] | None = None) -> Any:
        assert self._access is not None
        labels = {**APP, **self.labels, "run": run, "host": self.host, "pid": str(os.getpid()),
                  "started": str(int(time.time()))}
        give_up = time.monotonic() + self.settings.capacity_wait

        def countdown(err: Any, seconds: float) -> None:
            left = max(0.0, give_up - time.monotonic())
            self.on_progress(f"runtime: no room for a sandbox ({err.code}); trying again in "
                             f"{seconds:.1f} s, giving up in {left:.0f} s")

        sandbox = await family.client.sandboxes.create(
            wait=False, labels=labels, timeout_seconds=self.settings.sandbox_seconds,
            network=self._access.network() if network is None else network, on_lease_end="delete", on_capacity_wait=countdown,
            memory_mib=self.settings.memory_mib)
        family.live[sandbox.id] = sandbox
        if sandbox.state != "running":
            await sandbox.wait_for("running", self.settings.start_seconds)
        if sandbox.state != "running":
            raise BackendError(one_line(
                f"runtime backend: sandbox {sandbox.id} did not start: still {sandbox.state or 'unknown'} "
                f"after {self.settings.start_seconds} s (it was deleted); try again, or use --backend local"))
        return sandbox

    async def _prepare(self, sandbox: Any) -> str:
        """The sandbox's home (its default cwd), and every tool the install
        needs, checked in one command."""
        checks = "".join(
            f"{' '.join(map(_quote, argv))} >/dev/null 2>&1 || echo missing: {_quote(' '.join(argv))}\n"
            for argv in self._tools)
        done = await sandbox.exec(f'printf "home: %s\\n" "$PWD"\nmkdir -p reports\n{checks}', timeout_ms=60_000)
        lines = done.stdout.splitlines()
        missing = [line.removeprefix("missing: ") for line in lines if line.startswith("missing: ")]
        if missing:
            raise BackendError(f"runtime backend: `{missing[0]}` does not run in the sandbox "
                               f"(its image lacks {missing[0].split()[0]}): use --backend local")
        homes = [str(line).removeprefix("home: ") for line in lines if line.startswith("home: ")]
        if not homes or not homes[0].startswith("/"):
            raise BackendError(f"runtime backend: the sandbox did not say its home: {one_line(done.stderr)[:200]}")
        return homes[0]

    def _memory(self, sandbox: Any) -> int:
        mib = sandbox.info.get("memoryMiB") or self.settings.memory_mib or 0
        return int(mib) * 2**20


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _pack(export: TreeExporter, drop: tuple[str, ...] = ()) -> bytes:
    """Head's tree, exported here as one tar.gz: no clone host. The `drop`
    names are left out (what git holds where the environment goes)."""
    with tempfile.TemporaryDirectory(prefix="gatetui-export-") as tmp:
        export(Path(tmp) / "tree")
        for name in drop:
            gone = Path(tmp) / "tree" / name
            if gone.is_dir() and not gone.is_symlink():
                shutil.rmtree(gone)
            elif gone.is_symlink() or gone.exists():
                gone.unlink()
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            archive.add(Path(tmp) / "tree", arcname=".")
        return buffer.getvalue()


async def _upload(sandbox: Any, export: TreeExporter, remote: str) -> None:
    await sandbox.files.unarchive(remote, await asyncio.to_thread(_pack, export), gzip=True)


class RuntimeWorkspace:
    """One sandbox holding the tree at `<home>/repo`, the same path in every fork."""

    def __init__(self, family: RunFamily, sandbox: Any, home: str, label: str, memory: int,
                 fresh: Callable[[bool], Awaitable[Any]] | None = None):
        self.family, self.sandbox, self.home, self.label = family, sandbox, home, label
        self.memory = memory  # what Runtime bills while the sandbox runs
        self.fresh = fresh  # makes a sandbox for the runs; None: a copy, never forked
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
        try:
            data: bytes = await self.sandbox.files.read(self.report_path(name))
            return data
        except Exception as err:
            if not_found(err):
                return None
            raise self._error(err, f"reading the report {name}") from None

    def _error(self, err: BaseException, doing: str) -> BaseException:
        return backend_error(err, f"{doing} in sandbox {self.sandbox.id}") if is_sdk_error(err) else err

    async def run(self, command: str, *, timeout: float, on_output: OutputSink,
                  env: Mapping[str, str] | None = None, network: bool = True) -> CommandResult:
        """Stream the command's output, stderr into stdout inside the sandbox
        (one pipe keeps the order it was written in, as the local backend's
        does; two streams' chunks arrive in any order); its wall time is
        Runtime's figure, its CPU time the shell's `times` inside the sandbox."""
        self._usable()
        tail = OutputTail()

        def sink(text: str) -> None:
            tail.add(text)
            on_output(text)

        wrapped = f"( {command}\n) 2>&1\n__rc=$?\ntimes > {self.home}/{CPU_FILE} 2>/dev/null\nexit $__rc"
        started = time.monotonic()
        try:
            result = await asyncio.wait_for(self.sandbox.exec(
                wrapped, cwd=self.path, env={**self.family.env, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1",
                                             **(env or {})},
                timeout_ms=max(1000, int(timeout * 1000)), on_stdout=sink, on_stderr=sink,
            ), timeout + self.family.grace)
        except TimeoutError:
            return CommandResult(None, time.monotonic() - started, timed_out=True,
                                 output_tail=tail.text(), dropped_bytes=tail.dropped)
        except asyncio.CancelledError:
            self.family.sweep_soon()  # the run is ending: see RunFamily
            raise
        except Exception as err:
            raise self._error(err, f"running `{command}`") from None
        wall = result.duration_ms / 1000 if result.duration_ms is not None else time.monotonic() - started
        return CommandResult(
            exit_code=result.exit_code, wall_seconds=wall, cpu_seconds=await self._cpu_seconds(),
            peak_rss_bytes=self.memory, timed_out=result.timed_out,
            output_tail=tail.text(), dropped_bytes=tail.dropped,
        )

    async def _cpu_seconds(self) -> float:
        """The children's user+system time that `times` wrote; 0 if none."""
        try:
            text = (await self.sandbox.files.read(f"{self.home}/{CPU_FILE}")).decode()
        except Exception:
            return 0.0
        lines = text.strip().splitlines()
        return sum(int(m) * 60 + float(s) for m, s in TIMES.findall(lines[-1])) if lines else 0.0

    async def write_files(self, files: Mapping[str, bytes | None]) -> None:
        """Written files go in as one archive, deletions as one `rm`."""
        self._usable()
        for rel in files:
            if ".." in Path(rel).parts or Path(rel).is_absolute():
                raise BackendError(f"refusing to write outside the workspace: {rel}")
        written = {rel: data for rel, data in files.items() if data is not None}
        gone = [rel for rel, data in files.items() if data is None]
        try:
            if written:
                await self.sandbox.files.unarchive(self.path, _archive(written), gzip=True)
            if gone:
                done = await self.sandbox.exec(["rm", "-f", "--", *gone], cwd=self.path, timeout_ms=60_000)
                if done.exit_code != 0:
                    raise BackendError(f"runtime backend: could not delete {gone[0]}: {one_line(done.stderr)}")
        except BackendError:
            raise
        except Exception as err:
            raise self._error(err, "writing files") from None

    def _usable(self) -> None:
        if self.spent:
            raise BackendError(f"runtime backend: sandbox {self.sandbox.id} was deleted once its environment "
                               "was taken for the runs: nothing runs on the install's machine after its fork")

    async def fork(self, count: int, export: TreeExporter, keep: tuple[str, ...] = (),
                   network: bool = False) -> list[Workspace]:
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
            self._environment = (keep, await self._take_environment(keep))
            await self._spend()
        elif self._environment[0] != keep:
            raise BackendError("runtime backend: a fork asked for other folders than the first fork carried")
        tree = await asyncio.to_thread(_pack, export, keep)
        return list(await self._copies(lambda: fresh(network), count, tree, self._environment[1]))

    async def _take_environment(self, keep: tuple[str, ...]) -> bytes:
        """The kept folders as an archive made here and rewritten by the
        gate: made where head's code ran, so trusted for nothing."""
        if not keep:
            return rewrite(_archive({}), keep).archive
        packed = f"{self.home}/environment-{os.urandom(6).hex()}.tar.gz"
        names = " ".join(_quote(name) for name in keep)
        command = (f'set --; for n in {names}; do if [ -e "$n" ] || [ -L "$n" ]; then set -- "$@" "$n"; fi; '
                   f'done; if [ $# -eq 0 ]; then tar -czf {packed} --files-from /dev/null; '
                   f'else tar -czf {packed} -- "$@"; fi')
        done = await self.run(command, timeout=600, on_output=lambda _: None)
        raw = await self.read_report_at(packed) if done.ok else None
        if raw is None:
            raise BackendError(f"runtime backend: could not take the environment out of sandbox {self.sandbox.id} "
                               f"({done.describe_end()}): {done.output_tail[-300:]}")
        try:
            rewritten = await asyncio.to_thread(rewrite, raw, keep)
        except (tarfile.TarError, EOFError, OSError) as err:
            raise BackendError(f"runtime backend: the environment sandbox {self.sandbox.id} gave is no "
                               f"archive ({err})") from None
        if rewritten.left_out:
            self.family.progress(f"runtime: left out of the environment ({len(rewritten.left_out)}): "
                                 f"{'; '.join(rewritten.left_out[:5])}")
        return rewritten.archive

    async def read_report_at(self, path: str) -> bytes | None:
        try:
            data: bytes = await self.sandbox.files.read(path)
            return data
        except Exception as err:
            if not_found(err):
                return None
            raise self._error(err, f"reading {path}") from None

    async def _spend(self) -> None:
        """Delete this sandbox now: the runs never see it, and its room
        under the cap goes to them."""
        self.spent = True
        await self.family.delete(self.sandbox.id)

    async def _copies(self, fresh: Callable[[], Awaitable[Any]], count: int, tree: bytes,
                      environment: bytes) -> list[RuntimeWorkspace]:
        reserved, alive = self.family.reserved, len(self.family.live)
        if reserved is not None and alive + count > reserved:
            raise BackendError(f"runtime backend: {count} sandboxes for the runs would make {alive + count} at "
                               f"once; the cap leaves this run {reserved}")
        first = self._copy(await fresh())
        made = [first]
        try:
            await first.fill(tree, environment)
            if count > 1:
                try:
                    forks = await first.sandbox.fork(count - 1, labels=self.family.run_labels)
                except Exception as err:
                    raise first._error(err, f"forking {count - 1} copies") from None
                for copy in forks:
                    self.family.live[copy.id] = copy
                    made.append(self._copy(copy))
        except BaseException:  # the caller never gets them: they are closed here
            with contextlib.suppress(Exception):  # the first error is the one to tell
                await close_all(made)
            raise
        return made

    async def fill(self, tree: bytes, environment: bytes) -> None:
        """A fresh sandbox's tree: the export, then the environment, unpacked
        by the image's own tar (nothing of head's has run here)."""
        name = f"environment-{os.urandom(6).hex()}.tar.gz"
        try:
            await self.sandbox.files.unarchive(self.path, tree, gzip=True)
            await self.sandbox.files.unarchive(self.home, _archive({name: environment}), gzip=True)
        except Exception as err:
            raise self._error(err, "unpacking a fresh tree") from None
        done = await self.run(f"tar -xzf ../{name} --no-same-owner && rm -f ../{name}", timeout=600,
                              on_output=lambda _: None)
        if not done.ok:
            raise BackendError(f"runtime backend: could not unpack the environment in sandbox {self.sandbox.id} "
                               f"({done.describe_end()}): {done.output_tail[-300:]}")

    def _copy(self, sandbox: Any) -> RuntimeWorkspace:
        self._forks += 1
        return RuntimeWorkspace(self.family, sandbox, self.home, f"{self.label}-copy{self._forks}", self.memory)

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


def _archive(files: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for rel, data in files.items():
            info = tarfile.TarInfo(f"./{rel}")
            info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
