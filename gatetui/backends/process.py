"""Run one command in its own process group: streamed, limited, measured.

The command gets a new session (so a process group of its own) and is killed
as a group on timeout or cancel, and again after it exits so nothing it
left in the background outlives it. We wait with `os.wait4` to read the
command's CPU time and peak memory for the credit table.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import resource
import signal
import subprocess
import time
from collections import deque
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from gatetui.backends.base import CommandResult, OutputSink

OUTPUT_CAP = 1 << 20  # bytes of output kept per command; the rest is counted
GRACE_SECONDS = 2.0  # between SIGTERM and SIGKILL
DRAIN_SECONDS = 2.0  # to read what is left once the command has ended
T = TypeVar("T")


@dataclass
class OutputTail:
    """The last OUTPUT_CAP bytes of output, and a count of what fell off."""

    cap: int = OUTPUT_CAP
    parts: deque[str] = field(default_factory=deque)
    size: int = 0
    dropped: int = 0

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        while self.size > self.cap and self.parts:
            extra = self.size - self.cap
            head = self.parts[0]
            if len(head) <= extra:
                self.parts.popleft()
                self.size -= len(head)
                self.dropped += len(head)
            else:
                self.parts[0] = head[extra:]
                self.size -= extra
                self.dropped += extra

    def text(self) -> str:
        return "".join(self.parts)


def pid_alive(pid: int) -> bool:
    """Whether a process (a supervisor that may have crashed) still exists."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def run_process(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout: float,
    on_output: OutputSink,
    output_cap: int = OUTPUT_CAP,
) -> CommandResult:
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(write_fd)
    tail = OutputTail(output_cap)
    reader = asyncio.create_task(_pump(read_fd, tail, on_output))
    waiter = asyncio.ensure_future(asyncio.to_thread(os.wait4, proc.pid, 0))
    timed_out = False
    try:
        try:
            _, status, usage = await asyncio.wait_for(asyncio.shield(waiter), timeout)
        except TimeoutError:
            timed_out = True
            _, status, usage = await _stop(proc.pid, waiter)
    except BaseException:
        await _stop(proc.pid, waiter)
        raise
    finally:
        proc.returncode = 0  # reaped by wait4 above; keeps Popen from polling a stranger
        kill_group(proc.pid)
        await _drain(reader)
    return CommandResult(
        exit_code=os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) and not timed_out else None,
        signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        wall_seconds=time.monotonic() - started,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
        peak_rss_bytes=usage.ru_maxrss * 1024,
        timed_out=timed_out,
        output_tail=tail.text(),
        dropped_bytes=tail.dropped,
    )


async def _stop(
    pgid: int, waiter: "asyncio.Future[tuple[int, int, resource.struct_rusage]]"
) -> tuple[int, int, resource.struct_rusage]:
    """TERM the group, then KILL it if it lingers; always reap the child."""
    kill_group(pgid, signal.SIGTERM)
    try:
        return await asyncio.wait_for(asyncio.shield(waiter), GRACE_SECONDS)
    except TimeoutError:
        kill_group(pgid, signal.SIGKILL)
        return await waiter


async def _pump(fd: int, tail: OutputTail, on_output: OutputSink) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 16)
    pipe = os.fdopen(fd, "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    try:
        while chunk := await reader.read(1 << 16):
            text = decoder.decode(chunk)
            if text:
                tail.add(text)
                on_output(text)
        if rest := decoder.decode(b"", final=True):
            tail.add(rest)
            on_output(rest)
    finally:
        transport.close()


async def _drain(reader: asyncio.Task[None]) -> None:
    """Let the reader finish; a process that escaped the group and still
    holds the pipe must not hang the gate, so give up after a moment."""
    try:
        await asyncio.wait_for(asyncio.shield(reader), DRAIN_SECONDS)
    except TimeoutError:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader


async def to_the_end(work: Awaitable[T]) -> T:
    """Work in a thread goes on when its caller is cancelled: wait for it
    before the cancel goes on, so that close() never races a thread still
    writing into the folder it removes."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await task
        raise
