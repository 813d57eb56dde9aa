"""The emulator's snapshots: a sandbox's disk kept, and sandboxes started from it.

A snapshot is a copy of the sandbox's directory (`cp -a --reflink=auto`, as
a fork's is) at `<root>/snap/<id>`, taken while the sandbox is paused (its
commands SIGSTOPped, as a paused VM stands still), so that nothing writes to
it mid-copy. Processes are never kept, whatever the mode: "memory" (the
API's default) is accepted and answered as asked, but a sandbox started from
any snapshot here starts with no process running, as one from a "disk"
snapshot does on Runtime. Snapshots never expire here: `expiresAt` is only
reported.

As withruntime 0.35 uses them: `POST /v1/sandboxes/{id}:snapshot` with
`{name?, labels?, retentionDays?, mode?}` answers the snapshot; while its
`state` is "capturing" the SDK polls `GET /v1/snapshots/{id}`, then wakes a
source that was running (`POST /v1/sandboxes/{id}:wake`). Lists are newest
first, filtered by `sandboxId`, `name`, `state` and `label=key:value`, paged
with `limit` and `cursor`. `:update`, `:extend` and `:delete` are POSTs.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from tests.runtime_emulator.state import Box

if TYPE_CHECKING:
    from tests.runtime_emulator.server import Emulator, _Handler

MODES = ("memory", "disk")
DEFAULT_RETENTION_DAYS = 30  # the emulator's choice: nothing the SDK reads depends on it
DAY = 86400.0
PAGE_LIMIT = 50
CAPTURABLE = ("running", "paused", "stopped")
Query = dict[str, list[str]]


def _iso(moment: float | None) -> str | None:
    return None if moment is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


def copy_tree(source: Path, target: Path) -> None:
    """The whole directory, metadata and all, sharing blocks where the file
    system can: a snapshot, a fork and a start from a snapshot cost the same."""
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", "--reflink=auto", str(source), str(target)], check=True)


def _shape(box: Box) -> dict[str, Any]:
    info = box.info()
    return {"vcpu": info["vcpu"], "memoryMiB": info["memoryMiB"], "diskMiB": box.request.get("diskMiB")}


def _not_found(snapshot_id: str) -> Exception:
    from tests.runtime_emulator.server import ApiError

    return ApiError(
        404,
        "snapshot_not_found",
        f"Snapshot {snapshot_id} was not found.",
        hint="List your snapshots with runtime.snapshots.list().",
    )


@dataclass
class Snapshot:
    """One kept disk and its record."""

    id: str
    dir: Path
    source: str  # the sandbox it was taken from; it may be deleted since
    mode: str
    name: str | None
    labels: dict[str, str]
    retention_days: int
    shape: dict[str, Any]
    seq: int  # the order of taking: lists are newest first, and a cursor is one of these
    state: str = "capturing"
    created: float = field(default_factory=time.time)
    ready_at: float | None = None
    expires: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.expires = self.created + self.retention_days * DAY

    def finish(self) -> None:
        """The capture is over: the copy was made before the first answer,
        the state only tells it late (the `capturing_snapshots` fault)."""
        with self.lock:
            if self.state == "capturing":
                self.state, self.ready_at = "ready", time.time()

    def info(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "labels": dict(self.labels),
            "mode": self.mode,
            "state": self.state,
            "sourceSandboxId": self.source,
            "createdAt": _iso(self.created),
            "readyAt": _iso(self.ready_at),
            "retentionDays": self.retention_days,
            "expiresAt": _iso(self.expires),
            "shape": dict(self.shape),
            "error": None,
        }


class SnapshotRoutes:
    """`/v1/snapshots...`, a sandbox's `:snapshot`, a fork's kept snapshot,
    and the disk a create with `snapshot` starts from."""

    def __init__(self, emulator: Emulator, replayed: Callable[[_Handler], bool]):
        self.emu = emulator
        self.replayed = replayed  # answers a retried POST as its first attempt was
        self.seqs = itertools.count(1)

    # --- taking ---------------------------------------------------------

    def take(self, h: _Handler, box: Box, body: dict[str, Any]) -> None:
        """POST /v1/sandboxes/{id}:snapshot. With the `capturing_snapshots`
        fault the answer is "capturing" and a running source stays paused,
        as Runtime's is until the SDK, done polling, wakes it."""
        from tests.runtime_emulator.server import ApiError

        if self.replayed(h):
            return
        mode = body.get("mode") or "memory"
        if mode not in MODES:
            raise ApiError(400, "invalid_request", "mode must be memory or disk.", details={"field": "mode"})
        if box.state not in CAPTURABLE:
            raise ApiError(409, "sandbox_not_running", f"Sandbox {box.id} is {box.state}.")
        late = self.emu.faults.take("capturing_snapshots")
        snap = self.capture(box, body, mode, late)
        status, answer = (202 if late else 201), snap.info()
        key = h.headers.get("Idempotency-Key")
        if key:
            with self.emu.lock:
                self.emu.replays[key] = (status, answer)
        h.send_json(status, answer)

    def capture(self, box: Box, fields: dict[str, Any], mode: str, late: bool = False) -> Snapshot:
        """Copy the sandbox's directory while it is paused; wake it after,
        unless the capture is to be told late (then the caller's wake does)."""
        running = box.state == "running"
        if running:
            box.pause()
        snap_id = f"snap_{uuid.uuid4().hex[:12]}"
        snap = Snapshot(
            id=snap_id,
            dir=self.emu.root / "snap" / snap_id,
            source=box.id,
            mode=mode,
            name=fields.get("name"),
            labels=dict(fields.get("labels") or {}),
            retention_days=int(fields.get("retentionDays") or DEFAULT_RETENTION_DAYS),
            shape=_shape(box),
            seq=next(self.seqs),
        )
        copy_tree(box.dir, snap.dir)
        if not late:
            snap.finish()
            if running:
                box.wake()
        with self.emu.lock:
            self.emu.snaps[snap.id] = snap
        return snap

    def fill(self, box: Box) -> None:
        """A new sandbox's directory: a copy of the snapshot its create
        names, else empty. Refused before anything is made or counted: 404
        for a snapshot unknown or deleted, 409 for one still capturing."""
        from tests.runtime_emulator.server import ApiError

        snapshot_id = box.request.get("snapshot")
        if not snapshot_id:
            box.make_dirs()
            return
        snap = self.find(snapshot_id)
        with snap.lock:  # a delete waits for the copy, and a copy never starts from a deleted one
            if snap.state == "deleted":
                raise _not_found(snap.id)
            if snap.state != "ready":
                raise ApiError(
                    409,
                    "snapshot_not_ready",
                    f"Snapshot {snap.id} is {snap.state}.",
                    hint=f"Wait until snapshots.get('{snap.id}') is ready.",
                )
            copy_tree(snap.dir, box.dir)

    # --- /v1/snapshots --------------------------------------------------

    def find(self, snapshot_id: str, deleted: bool = False) -> Snapshot:
        with self.emu.lock:
            snap = self.emu.snaps.get(snapshot_id)
        if snap is None or (snap.state == "deleted" and not deleted):
            raise _not_found(snapshot_id)
        return snap

    def handle(self, h: _Handler, method: str, rest: list[str], query: Query, body: dict[str, Any]) -> None:
        from tests.runtime_emulator.server import ApiError

        actions = {"delete": self.delete, "update": self.update, "extend": self.extend}
        head, _, verb = rest[0].partition(":") if len(rest) == 1 else ("", "", "")
        if not rest and method == "GET":
            return self.list(h, query)
        if head and not verb and method == "GET":
            snap = self.find(unquote(head))
            snap.finish()  # the poll after a late answer finds the capture over
            return h.send_json(200, snap.info())
        if not head or method != "POST" or verb not in actions:
            raise ApiError(404, "route_not_found", f"No route {method} /v1/snapshots/{'/'.join(rest)}.")
        return actions[verb](h, self.find(unquote(head), deleted=verb == "delete"), body)

    def list(self, h: _Handler, query: Query) -> None:
        """Newest first; `nextCursor` is the `seq` of the page's last one,
        so a delete between pages skips nothing."""
        from tests.runtime_emulator.server import ApiError

        limit, cursor = h.query_one(query, "limit", str(PAGE_LIMIT)), h.query_one(query, "cursor")
        if not limit.isdigit() or not 1 <= int(limit) <= 100 or not (cursor == "" or cursor.isdigit()):
            raise ApiError(
                400,
                "invalid_request",
                "limit is 1 to 100, and cursor a nextCursor.",
                details={"field": "limit" if not limit.isdigit() else "cursor"},
            )
        with self.emu.lock:
            snaps = sorted(
                (s for s in self.emu.snaps.values() if s.state != "deleted"), key=lambda s: s.seq, reverse=True
            )
        found = [s for s in snaps if self._matches(h, s, query) and (not cursor or s.seq < int(cursor))]
        page = found[: int(limit)]
        more = len(found) > len(page)
        h.send_json(200, {"data": [s.info() for s in page], "nextCursor": str(page[-1].seq) if more else None})

    @staticmethod
    def _matches(h: _Handler, snap: Snapshot, query: Query) -> bool:
        fields = {"sandboxId": snap.source, "name": snap.name, "state": snap.state}
        asked = {key: h.query_one(query, key) for key in fields}
        labels = [label.partition(":")[::2] for label in query.get("label", [])]
        return all(fields[key] == value for key, value in asked.items() if value) and all(
            snap.labels.get(k) == v for k, v in labels
        )

    def delete(self, h: _Handler, snap: Snapshot, body: dict[str, Any]) -> None:
        """Gone for good, its directory too; sandboxes started from it keep
        theirs. Deleting it again answers the same, as a sandbox's delete."""
        with snap.lock:
            snap.state = "deleted"
            shutil.rmtree(snap.dir, ignore_errors=True)
        h.send_json(200, {"id": snap.id, "state": "deleted", "deletedAt": _iso(time.time())})

    def update(self, h: _Handler, snap: Snapshot, body: dict[str, Any]) -> None:
        """What is sent replaces (a null name clears it); `ifLabels`, when
        sent, must equal the labels now, a fence for concurrent writers."""
        from tests.runtime_emulator.server import ApiError

        with snap.lock:
            fence = body.get("ifLabels")
            if fence is not None and fence != snap.labels:
                raise ApiError(
                    409,
                    "snapshot_metadata_changed",
                    f"Snapshot {snap.id}'s labels changed.",
                    hint="Read it again and retry.",
                )
            if "name" in body:
                snap.name = body["name"]
            if "labels" in body:
                snap.labels = dict(body["labels"] or {})
        h.send_json(200, snap.info())

    def extend(self, h: _Handler, snap: Snapshot, body: dict[str, Any]) -> None:
        """Kept `retentionDays` (1 to 365) from now."""
        from tests.runtime_emulator.server import ApiError

        days = body.get("retentionDays")
        if not isinstance(days, int) or not 1 <= days <= 365:
            raise ApiError(400, "invalid_request", "retentionDays is 1 to 365.", details={"field": "retentionDays"})
        with snap.lock:
            snap.retention_days, snap.expires = days, time.time() + days * DAY
        h.send_json(200, snap.info())
