"""The emulator's routes: what each request does to the sandboxes.

Only the part of the API the runtime backend uses: create (from a
snapshot too), get (with waitFor), list by label, delete, stop, pause, wake,
exec (whole or streamed), follow a process's output from a cursor, signal
it, write/read a file, unpack an archive (in one body or in chunks), fork,
snapshots (snapshots.py), and the account's usage.
"""

from __future__ import annotations

import io
import json
import shutil
import signal
import tarfile
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from tests.runtime_emulator.snapshots import SnapshotRoutes, copy_tree
from tests.runtime_emulator.state import Box, Chunk, Proc

if TYPE_CHECKING:
    from tests.runtime_emulator.server import Emulator, _Handler

HEARTBEAT_SECONDS = 20.0  # a quiet stream gets a `continue` and ends; the SDK follows
CHUNK_BYTES = 1 << 20
SEND_BYTES = 1 << 20  # the most output one stream event carries
Query = dict[str, list[str]]


def _joined(chunks: list[Chunk], cursor: int) -> Iterator[dict[str, Any]]:
    """The chunks from byte `cursor` on, neighbours of one stream joined."""
    kind, offset, parts, size = "", 0, [], 0
    for chunk in chunks:
        data = chunk.text
        if chunk.offset + chunk.size <= cursor:
            continue
        if chunk.offset < cursor:  # a follow from inside a chunk
            data = chunk.text.encode()[cursor - chunk.offset :].decode(errors="replace")
        if parts and (chunk.kind != kind or size >= SEND_BYTES):
            yield {"type": kind, "offset": offset, "data": "".join(parts)}
            parts = []
        if not parts:
            kind, offset, size = chunk.kind, max(chunk.offset, cursor), 0
        parts.append(data)
        size += chunk.size
    if parts:
        yield {"type": kind, "offset": offset, "data": "".join(parts)}


class Routes:
    def __init__(self, emulator: Emulator):
        self.emu = emulator
        self.uploads: dict[str, dict[str, Any]] = {}
        self.snaps = SnapshotRoutes(emulator, self._replayed)

    def handle(self, h: _Handler, method: str, segs: list[str], query: Query, raw: bytes) -> None:
        from tests.runtime_emulator.server import ApiError

        body = json.loads(raw) if raw and h.headers.get("Content-Type") == "application/json" else {}
        if segs == ["v1", "usage"]:
            return h.send_json(
                200, {"credited": "5000000", "spent": "1250", "held": "0", "available": "4998750", "trial": None}
            )
        if segs[:2] == ["v1", "snapshots"]:
            return self.snaps.handle(h, method, segs[2:], query, body)
        if segs[:2] != ["v1", "sandboxes"]:
            raise ApiError(404, "route_not_found", f"No route {method} /{'/'.join(segs)}.")
        rest = segs[2:]
        if not rest:
            return self.create(h, body) if method == "POST" else self.list(h, query)
        head, _, verb = rest[0].partition(":")
        box_id = unquote(head)
        if len(rest) == 1:
            if verb:
                action = {
                    "exec": self.exec,
                    "fork": self.fork,
                    "stop": self.stop,
                    "pause": self.pause,
                    "wake": self.wake,
                    "snapshot": self.snaps.take,
                }[verb]
                return action(h, self.emu.box(box_id), body)
            return self.delete(h, box_id) if method == "DELETE" else self.get(h, box_id, query)
        box = self.emu.box(box_id)
        if rest[1] == "processes":
            pid, _, verb = unquote(rest[2]).partition(":")
            proc = box.procs.get(pid)
            if proc is None:
                raise ApiError(404, "process_not_found", f"Process {pid} was not found.")
            if verb == "signal":
                proc.kill(getattr(signal, body.get("signal", "SIGTERM"), signal.SIGTERM))
                return h.send_json(200, {"id": pid})
            h.start_stream()
            if proc.lost:
                return h.end_stream()
            return self.pump(h, proc, int(h.query_one(query, "cursor", "0")), cut=False)
        return self.files(h, method, box, rest[2:], query, raw)

    # --- sandboxes ------------------------------------------------------

    def _replayed(self, h: _Handler) -> bool:
        key = h.headers.get("Idempotency-Key")
        with self.emu.lock:
            answer = self.emu.replays.get(key or "")
        if answer is not None:
            h.send_json(*answer)
        return answer is not None

    def _register(self, h: _Handler, box: Box, status: int, answer: Any) -> None:
        with self.emu.lock:
            self.emu.boxes[box.id] = box
            self.emu.replays[h.headers.get("Idempotency-Key") or box.id] = (status, answer)
        limit = box.request.get("timeoutSeconds")
        if limit:  # on_lease_end: the sandbox ends at its time limit
            box.timer = threading.Timer(float(limit), box.end)
            box.timer.daemon = True
            box.timer.start()

    def create(self, h: _Handler, body: dict[str, Any]) -> None:
        from tests.runtime_emulator.server import ApiError

        if self._replayed(h):
            return
        box = Box(self.emu.root, self.emu.fixed, body.get("labels") or {}, body)
        self.snaps.fill(box)  # first: a snapshot not found is refused before the sandbox is counted
        try:
            self.emu.claim_room(1)
        except ApiError:
            shutil.rmtree(box.dir, ignore_errors=True)
            raise
        box.stuck = self.emu.faults.take("never_running")
        box.state = "starting" if box.stuck else "running"
        answer = box.info()
        self._register(h, box, 201, answer)
        self.emu.count_live(1)
        h.send_json(201, answer)

    def get(self, h: _Handler, box_id: str, query: Query) -> None:
        box = self.emu.box(box_id)
        wanted = h.query_one(query, "waitFor")
        if wanted and box.state != wanted:
            deadline = time.monotonic() + float(h.query_one(query, "timeoutSeconds", "60"))
            while box.state != wanted and time.monotonic() < deadline:
                time.sleep(0.05)
        h.send_json(200, box.info())

    def list(self, h: _Handler, query: Query) -> None:
        wanted = [label.partition(":")[::2] for label in query.get("label", [])]
        with self.emu.lock:
            boxes = [b for b in self.emu.boxes.values() if b.state != "deleted"]
        data = [b.info() for b in boxes if all(b.labels.get(k) == v for k, v in wanted)]
        h.send_json(200, {"data": data, "nextCursor": None})

    def delete(self, h: _Handler, box_id: str) -> None:
        with self.emu.lock:
            box = self.emu.boxes.get(box_id)
        if box is None:
            self.emu.box(box_id)  # raises the 404
            return
        box.end()
        h.send_json(
            200, {"id": box_id, "status": "deleted", "deletedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        )

    def stop(self, h: _Handler, box: Box, body: dict[str, Any]) -> None:
        for proc in list(box.procs.values()):
            proc.kill()
        box.state = "stopped"
        h.send_json(200, box.info())

    def pause(self, h: _Handler, box: Box, body: dict[str, Any]) -> None:
        from tests.runtime_emulator.server import ApiError

        if box.state not in ("running", "paused"):
            raise ApiError(409, "sandbox_not_running", f"Sandbox {box.id} is {box.state}.")
        box.pause()
        h.send_json(200, box.info())

    def wake(self, h: _Handler, box: Box, body: dict[str, Any]) -> None:
        """Only a paused sandbox wakes; `not_paused` for any other is what
        the SDK's wake (after a snapshot told "capturing") takes as done."""
        from tests.runtime_emulator.server import ApiError

        if box.state != "paused":
            raise ApiError(409, "not_paused", f"Sandbox {box.id} is {box.state}, not paused.")
        box.wake()
        h.send_json(200, box.info())

    def fork(self, h: _Handler, box: Box, body: dict[str, Any]) -> None:
        if self._replayed(h):
            return
        copies, count = [], body.get("count") or 1
        self.emu.claim_room(count)
        # keepSnapshot: the snapshot the copies start from is kept, and answered (morph's branch reads it)
        kept = self.snaps.capture(box, {}, "memory") if body.get("keepSnapshot") else None
        for _ in range(count):
            labels = {**box.labels, **(body.get("labels") or {})}
            copy = Box(self.emu.root, self.emu.fixed, labels, {**box.request, "forkOf": box.id})
            copy_tree(box.dir if kept is None else kept.dir, copy.dir)
            copy.state = "running"
            copies.append(copy)
        answer: dict[str, Any] = {"sandboxes": [c.info() for c in copies]}
        if kept is not None:
            answer["snapshot"] = kept.info()
        for copy in copies:
            self._register(h, copy, 201, answer)
        self.emu.count_live(count)
        h.send_json(201, answer)

    # --- commands -------------------------------------------------------

    def exec(self, h: _Handler, box: Box, body: dict[str, Any]) -> None:
        from tests.runtime_emulator.server import ApiError

        if box.state != "running":
            raise ApiError(409, "sandbox_not_running", f"Sandbox {box.id} is {box.state}.")
        proc = box.start(body, self.emu.command_delay)
        if not body.get("stream"):
            end = proc.wait_exit()
            out, err = proc.output()
            return h.send_json(
                200,
                {**{k: v for k, v in end.items() if k != "type"}, "stdout": out, "stderr": err, "processId": proc.id},
            )
        h.start_stream()
        h.send_event({"type": "start", "processId": proc.id})
        if self.emu.faults.take("lose_streams"):
            proc.lost = True
            return h.end_stream()
        self.pump(h, proc, 0, cut=self.emu.faults.take("cut_streams"))

    def pump(self, h: _Handler, proc: Proc, cursor: int, cut: bool) -> None:
        """Send the output from `cursor` as it comes, then the exit; a quiet
        stream ends with `continue`, and a cut one after its first output.
        Chunks that came together go out as one event of up to SEND_BYTES
        (a flood is a few hundred events, not a million), and output the
        command's buffer no longer holds is skipped with `truncated`."""
        index = 0
        while True:
            proc.wait_for_more(index, HEARTBEAT_SECONDS)
            index, new, end = proc.since(index)
            if new and new[0].offset > cursor:
                h.send_event({"type": "truncated", "droppedBytes": new[0].offset - cursor, "resumeAt": new[0].offset})
                cursor = new[0].offset
            for event in _joined(new, cursor):
                h.send_event(event)
                cursor = event["offset"] + len(event["data"].encode())
                if cut:
                    return h.cut()
            if end is not None and not new:
                h.send_event(end)
                return h.end_stream()
            if end is None and not new:
                h.send_event({"type": "continue", "processId": proc.id, "cursor": cursor})
                return h.end_stream()

    # --- files ----------------------------------------------------------

    def files(self, h: _Handler, method: str, box: Box, segs: list[str], query: Query, raw: bytes) -> None:
        from tests.runtime_emulator.server import ApiError

        path = h.query_one(query, "path")
        if segs == ["content"] and method == "PUT":
            target = box.host_path(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(raw)
            target.chmod(int(h.query_one(query, "mode", "644"), 8))
            return h.send_json(200, {"path": path, "size": len(raw)})
        if segs == ["content"]:
            target = box.host_path(path)
            if not target.is_file():
                raise ApiError(404, "file_not_found", f"{path} does not exist.")
            return h.send_bytes(target.read_bytes())
        if segs == ["archive"]:
            return self._unpack(h, box, path, raw)
        return self._archive_upload(h, method, box, segs, query, raw)

    def _unpack(self, h: _Handler, box: Box, path: str, data: bytes) -> None:
        target = box.host_path(path)
        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            archive.extractall(target, filter="data")
        h.send_json(200, {"path": path})

    def _archive_upload(self, h: _Handler, method: str, box: Box, segs: list[str], query: Query, raw: bytes) -> None:
        if segs == ["archive", "uploads"]:
            upload = f"upl_{len(self.uploads) + 1}_{box.id}"
            body = json.loads(raw or b"{}")
            self.uploads[upload] = {"path": body["path"], "parts": {}}
            return h.send_json(201, {"uploadId": upload, "chunkBytes": CHUNK_BYTES})
        upload, _, verb = unquote(segs[2]).partition(":")
        state = self.uploads[upload]
        if verb == "commit":
            data = b"".join(part for _, part in sorted(state["parts"].items()))
            del self.uploads[upload]
            return self._unpack(h, box, state["path"], data)
        if verb == "abort":
            self.uploads.pop(upload, None)
            return h.send_json(200, {})
        state["parts"][int(h.query_one(query, "offset", "0"))] = raw
        h.send_json(200, {"received": len(raw)})
