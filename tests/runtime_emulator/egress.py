"""The emulator's egress proxy: a sandbox's only way out when its create said
`"network": {"internet": true, "allow": [...]}`.

A Runtime VM with an allow list reaches those hosts and nothing else, and
never the host's loopback. Here every command has a network namespace of its
own (loopback alone), so the one way out is a file: the sandbox's own proxy
listens on a UNIX socket in the sandbox's host directory (its commands see it
at `<fixed>/egress.sock`; no other sandbox's directory is visible to them), a
unix socket being a file crosses network namespaces. Inside the namespace
FORWARDER relays 127.0.0.1:PORT to that socket, and HTTP(S)_PROXY point there,
as an image with an egress proxy sets them: pip and npm go through it.

The proxy speaks just enough HTTP: CONNECT host:port (https, a tunnel) and
absolute-URI requests (plain http), the latter forwarded with
`Connection: close` both ways, so a kept-alive client connection never
carries a second request, to another host, past the check. Only a target
whose host is in the allow list (exact, case-insensitive; any port) is
reached; anything else gets 403 naming the host.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path
from urllib.parse import urlsplit

PORT = 3128  # the forwarder's port on each command's own loopback
SOCKET_NAME = "egress.sock"  # in the sandbox's directory: `<fixed>/egress.sock` inside
PROXY_URL = f"http://127.0.0.1:{PORT}"
PROXY_ENV = {
    **{name: PROXY_URL for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")},
    **{name: "localhost,127.0.0.1" for name in ("NO_PROXY", "no_proxy")},
}
HEAD_LIMIT = 64 << 10  # the most a request's or response's head may take
CONNECT_SECONDS = 30.0
READ_BYTES = 1 << 16
HOP_HEADERS = frozenset(
    {
        "connection",
        "proxy-connection",
        "keep-alive",
        "proxy-authorization",
        "proxy-authenticate",
        "te",
        "trailer",
        "upgrade",
    }
)

# Runs inside the command's namespaces as `python3 -I -S -c FORWARDER SOCKET PORT`
# before the command: it binds and listens, then forks, and the parent's exit
# lets the command start with the port already listening. The child (in the
# command's process group and pid namespace, so it dies with the command)
# relays each connection to the unix socket in a process of its own. Only
# `_socket`, `os` and `select`: importing `socket` (enum, selectors) would
# double the ~12 ms every exec with internet pays. Data for a side that is
# gone is read and dropped, never left unread: a close with unread data
# resets the TCP connection, and the client may lose the answer it was sent.
FORWARDER = """\
import _socket, os, select, sys
server = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
server.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", int(sys.argv[2])))
server.listen(128)
if os.fork():
    os._exit(0)
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
import _signal
_signal.signal(_signal.SIGCHLD, _signal.SIG_IGN)


def relay(a, b):
    peer = {a: b, b: a}
    while peer:
        for src in select.select(list(peer), [], [])[0]:
            data = src.recv(65536)
            try:
                peer[src].sendall(data) if data else peer.pop(src).shutdown(_socket.SHUT_WR)
            except OSError:
                pass


while True:
    fd, _ = server._accept()
    if os.fork():
        os.close(fd)
        continue
    try:
        server.close()
        upstream = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        upstream.connect(sys.argv[1])
        relay(_socket.socket(fileno=fd), upstream)
    finally:
        os._exit(0)
"""


class EgressProxy:
    """One sandbox's proxy on the unix socket `path`, letting through only
    the hosts in `allow`."""

    def __init__(self, path: Path, allow: Iterable[str]):
        self.path = path
        self.allow = frozenset(host.lower() for host in allow)
        self.conns: set[socket.socket] = set()  # open either side, shut at close()
        self.asked: list[tuple[str, bool]] = []  # each target host asked for, and whether let through
        self.closed = False
        self.lock = threading.Lock()
        path.unlink(missing_ok=True)  # a fork's copy of its source's (dead) socket file
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(128)
        threading.Thread(target=self._accept, daemon=True, name=f"egress {path.parent.name}").start()

    def allows(self, host: str) -> bool:
        return host.lower() in self.allow

    def close(self) -> None:
        """Stop accepting and cut every connection still open: the sandbox is gone."""
        with self.lock:
            self.closed = True
            conns, self.conns = list(self.conns), set()
        for sock in (self.server, *conns):
            _shut(sock)
        self.path.unlink(missing_ok=True)

    def _track(self, sock: socket.socket) -> bool:
        """Note an open socket for close(); one opened after close() is shut at once."""
        with self.lock:
            kept = not self.closed
            if kept:
                self.conns.add(sock)
        if not kept:
            _shut(sock)
        return kept

    def _forget(self, *socks: socket.socket | None) -> None:
        for sock in socks:
            if sock is not None:
                with self.lock:
                    self.conns.discard(sock)
                _shut(sock)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:  # close() shut the listening socket
                return
            if self._track(conn):
                threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        upstream = None
        try:
            head, rest = read_head(conn)
            if head is None:
                return
            method, target, version, headers = parse_head(head)
            if method == "CONNECT":
                upstream = self._tunnel(conn, target, rest)
            else:
                upstream = self._forward(conn, method, target, version, headers, rest)
        except ValueError as err:
            with suppress(OSError):
                send_status(conn, 400, "Bad Request", f"egress: {err}")
        except OSError:
            pass
        finally:
            self._forget(conn, upstream)

    def _open(self, conn: socket.socket, host: str, port: int) -> socket.socket | None:
        """A connection to an allowed host; None once the client has its 403 or 502."""
        self.asked.append((host, self.allows(host)))
        if not self.allows(host):
            send_status(conn, 403, "Forbidden", f"egress: {host} is not in this sandbox's allow list")
            return None
        try:
            upstream = socket.create_connection((host, port), timeout=CONNECT_SECONDS)
        except OSError as err:
            send_status(conn, 502, "Bad Gateway", f"egress: cannot reach {host}:{port}: {err}")
            return None
        upstream.settimeout(None)
        return upstream if self._track(upstream) else None

    def _tunnel(self, conn: socket.socket, target: str, rest: bytes) -> socket.socket | None:
        """CONNECT host:port: a byte tunnel once the host is allowed."""
        host, port = split_authority(target)
        upstream = self._open(conn, host, port)
        if upstream is not None:
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            upstream.sendall(rest)
            _relay(conn, upstream, response=False)
        return upstream

    def _forward(
        self, conn: socket.socket, method: str, target: str, version: str, headers: list[tuple[str, str]], rest: bytes
    ) -> socket.socket | None:
        """An absolute http:// request: sent on in origin form, with `Connection: close`."""
        url = urlsplit(target)
        if url.scheme != "http" or not url.hostname:
            send_status(conn, 400, "Bad Request", f"egress: only CONNECT and http:// URLs, not {target!r}")
            return None
        upstream = self._open(conn, url.hostname, url.port or 80)
        if upstream is not None:
            path = (url.path or "/") + (f"?{url.query}" if url.query else "")
            headers = [("Host", url.netloc), *((k, v) for k, v in headers if k.lower() != "host")]  # RFC 9112 3.2.2
            upstream.sendall(build_head(f"{method} {path} {version}", headers) + rest)
            _relay(conn, upstream, response=True)
        return upstream


def read_head(sock: socket.socket) -> tuple[bytes | None, bytes]:
    """An HTTP head up to its blank line, and what came after it; None and
    all that came when the stream ends first or the head is too long."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(READ_BYTES)
        data += chunk
        if not chunk or len(data) > HEAD_LIMIT:
            return None, data
    end = data.index(b"\r\n\r\n") + 4
    return data[:end], data[end:]


def parse_head(head: bytes) -> tuple[str, str, str, list[tuple[str, str]]]:
    """Method, target, version and headers of a request head; ValueError if malformed."""
    lines = head.decode("latin-1").split("\r\n")
    words = lines[0].split(" ")
    if len(words) != 3:
        raise ValueError(f"not a request line: {lines[0][:200]!r}")
    method, target, version = words
    headers = [(name.strip(), value.strip()) for name, _, value in (line.partition(":") for line in lines[1:] if line)]
    return method, target, version, headers


def build_head(first_line: str, headers: list[tuple[str, str]]) -> bytes:
    """A head without the hop-by-hop headers (and those Connection names), saying `Connection: close`."""
    named = {
        word.strip().lower() for name, value in headers if name.lower() == "connection" for word in value.split(",")
    }
    kept = [f"{name}: {value}" for name, value in headers if name.lower() not in HOP_HEADERS | named]
    return "\r\n".join([first_line, *kept, "Connection: close", "", ""]).encode("latin-1")


def closing_head(head: bytes) -> bytes:
    """A response head saying `Connection: close`: the client opens a new
    connection (checked again) for its next request."""
    first, *lines = head.decode("latin-1").split("\r\n")
    headers = [(name.strip(), value.strip()) for name, _, value in (line.partition(":") for line in lines if line)]
    return build_head(first, headers)


def split_authority(target: str) -> tuple[str, int]:
    """CONNECT's `host:port` (`[v6]:port` too); ValueError if it is not one."""
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"not host:port: {target!r}")
    return host.strip("[]"), int(port)


def send_status(conn: socket.socket, code: int, reason: str, message: str) -> None:
    body = (message + "\n").encode()
    head = (
        f"HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    conn.sendall(head.encode() + body)


def _relay(conn: socket.socket, upstream: socket.socket, response: bool) -> None:
    """Client to upstream in a thread (a request's body too), upstream to
    client here, its head first made to say `Connection: close` when it is
    an HTTP `response`; returns when the upstream side ends."""
    threading.Thread(target=_pump, args=(conn, upstream), daemon=True).start()
    with suppress(OSError):
        if response:
            head, more = read_head(upstream)
            conn.sendall(more if head is None else closing_head(head) + more)
        _pump(upstream, conn)


def _pump(src: socket.socket, dst: socket.socket) -> None:
    """Copy src to dst until src ends, then end dst's writing side."""
    with suppress(OSError):
        while data := src.recv(READ_BYTES):
            dst.sendall(data)
    with suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


def _shut(sock: socket.socket) -> None:
    """Shut before close: a thread blocked in recv/accept on it wakes up."""
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
