"""The emulator's HTTP side: a threaded stdlib server on 127.0.0.1.

It answers the routes the runtime backend uses, framed as the SDK expects
(../shared/reference/withruntime-protocol.md): JSON answers with a length,
NDJSON streams chunked, errors as `{"error": {code, message, hint, ...}}`.
`Emulator` owns the server thread, the sandboxes, the snapshots and their
directories; `close()` ends every sandbox and removes everything it made.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.runtime_emulator.routes import Routes
from tests.runtime_emulator.snapshots import Snapshot
from tests.runtime_emulator.state import Box, Faults


class ApiError(Exception):
    """An error answer: status and the API's error body."""

    def __init__(self, status: int, code: str, message: str, **extra: Any):
        super().__init__(message)
        self.status, self.body = status, {"code": code, "message": message, **extra}


class Emulator:
    """A Runtime API on a random loopback port; `url` goes in RUNTIME_API_URL."""

    def __init__(self, api_key: str, command_delay: float = 0.0, max_live: int | None = None):
        self.api_key = api_key
        self.max_live = max_live  # the account's sandboxes at once (the free tier's four); None: no limit
        self.claimed = 0  # sandboxes being made, counted against max_live before they exist
        self.refused = 0  # creates and forks refused for max_live
        self.command_delay = command_delay  # seconds every exec takes before its command: a slow VM
        self.root = Path(tempfile.mkdtemp(prefix="rtemu-"))
        self.fixed = self.root / "box"  # every sandbox's path as its commands see it
        self.fixed.mkdir()
        self.faults = Faults()
        self.boxes: dict[str, Box] = {}
        self.snaps: dict[str, Snapshot] = {}  # deleted ones kept, marked so: a delete again answers the same
        self.lock = threading.Lock()
        self.replays: dict[str, tuple[int, Any]] = {}  # idempotency key -> answer
        self.requests: list[str] = []  # "METHOD path" of every request, in order
        self.peak_live = 0  # the most sandboxes alive at once
        self.routes = Routes(self)
        handler = type("Handler", (_Handler,), {"emulator": self})
        self.server = _Server(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def live(self) -> list[str]:
        """Ids of the sandboxes not deleted."""
        with self.lock:
            return sorted(i for i, b in self.boxes.items() if b.state != "deleted")

    def snapshots(self) -> list[str]:
        """Ids of the snapshots not deleted. They outlive their sandboxes, as
        Runtime's do, so the end-of-test check leaves them alone."""
        with self.lock:
            return sorted(i for i, s in self.snaps.items() if s.state != "deleted")

    def claim_room(self, count: int) -> None:
        """Refuse a create or fork past the account's limit, as Runtime does
        (429 quota_exceeded); else count the sandboxes about to be made."""
        with self.lock:
            alive = sum(b.state != "deleted" for b in self.boxes.values()) + self.claimed
            if self.max_live is not None and alive + count > self.max_live:
                self.refused += 1
                raise ApiError(
                    429,
                    "quota_exceeded",
                    f"This account runs at most {self.max_live} sandboxes at once.",
                    hint="Delete a sandbox, or wait for one to end.",
                    retryAfterMs=200,
                )
            self.claimed += count

    def count_live(self, made: int) -> None:
        """The claimed sandboxes exist now: note how many are alive at once."""
        with self.lock:
            self.claimed -= made
            alive = sum(b.state != "deleted" for b in self.boxes.values())
            self.peak_live = max(self.peak_live, alive)

    def box(self, box_id: str) -> Box:
        with self.lock:
            box = self.boxes.get(box_id)
        if box is None or box.state == "deleted":
            raise ApiError(
                404,
                "sandbox_not_found",
                f"Sandbox {box_id} was not found.",
                hint="List your sandboxes with runtime.sandboxes.list().",
            )
        return box

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        with self.lock:
            boxes = list(self.boxes.values())
        for box in boxes:
            box.end()
        shutil.rmtree(self.root, ignore_errors=True)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (the SDK closes a stream at its exit) is no error."""
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    emulator: Emulator
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else ~40 ms per kept-alive answer

    def log_message(self, *_: Any) -> None:
        """Quiet: the tests read `emulator.requests` instead."""

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        emu = self.emulator
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        emu.requests.append(f"{method} {url.path}")
        try:
            self._refuse_by_fault(method, url.path)
            if self.headers.get("Authorization") != f"Bearer {emu.api_key}":
                raise ApiError(
                    401,
                    "unauthorized",
                    "That API key is not valid.",
                    hint="Set RUNTIME_API_KEY to a key from your account.",
                )
            segments = [s for s in url.path.split("/") if s]
            query = {k: v for k, v in parse_qs(url.query, keep_blank_values=True).items()}
            emu.routes.handle(self, method, segments, query, raw)
        except ApiError as err:
            self.send_json(err.status, {"error": err.body})
        except PermissionError as err:
            self.send_json(403, {"error": {"code": "forbidden_path", "message": str(err)}})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _refuse_by_fault(self, method: str, path: str) -> None:
        faults = self.emulator.faults
        is_create = method == "POST" and path.rstrip("/") == "/v1/sandboxes"
        if is_create and faults.take("no_capacity"):
            raise ApiError(
                429,
                "no_capacity",
                "No room for a sandbox in this region right now.",
                hint="It frees by itself; sandboxes.create waits for it.",
                retryAfterMs=faults.capacity_retry_ms,
            )
        if faults.unavailable_on in f"{method} {path}" and faults.take("unavailable"):
            raise ApiError(
                503, faults.unavailable_code, "The host is restarting.", hint="Try again in a moment.", retryAfterMs=50
            )
        if faults.take("rate_limited"):
            raise ApiError(
                429, "rate_limited", "Too many requests.", hint="Slow down.", retryAfterMs=faults.rate_retry_ms
            )

    # --- answers --------------------------------------------------------

    def send_json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_bytes(self, data: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def send_event(self, event: dict[str, Any]) -> None:
        line = json.dumps(event).encode() + b"\n"
        self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
        self.wfile.flush()

    def end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def cut(self) -> None:
        """Drop the connection mid-body: no last chunk, as a network cut."""
        self.wfile.flush()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def query_one(self, query: dict[str, list[str]], name: str, default: str = "") -> str:
        return query.get(name, [default])[0]
