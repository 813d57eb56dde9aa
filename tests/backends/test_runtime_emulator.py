"""The emulator, driven by the real, unmodified withruntime SDK.

These pin the wire protocol the backend relies on (create, exec whole and
streamed, the follow from a cursor, files, fork, list by label, delete), and
that each injected fault looks to the SDK as the real API's would: the SDK's
own retry rules must take over, not special code in the emulator. And the
network a create asks for is what its commands get: their own loopback
always, and with `internet: true` the allow list's hosts only, through the
sandbox's egress proxy.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import withruntime

from tests.runtime_emulator import Emulator
from tests.runtime_emulator.egress import PORT, SOCKET_NAME, EgressProxy
from tests.runtime_emulator.fixtures import KEY, emulator  # noqa: F401 - a fixture


@pytest.fixture
def client(emulator: Emulator) -> Iterator[withruntime.Runtime]:
    """The SDK's client, closed at the test's end: its kept-alive sockets are
    never left to the garbage collector (an unclosed-socket warning)."""
    with withruntime.Runtime() as runtime:
        yield runtime


@pytest.mark.sandbox
def test_exec_runs_for_real_whole_and_streamed(emulator: Emulator, client: withruntime.Runtime) -> None:
    sandbox = client.sandboxes.create(labels={"app": "emu-test"}, timeout_seconds=600)
    assert sandbox.state == "running"
    whole = sandbox.exec("echo hi; echo err >&2; exit 3")
    assert (whole.exit_code, whole.stdout, whole.stderr) == (3, "hi\n", "err\n")
    chunks: list[str] = []
    streamed = sandbox.exec("for i in 1 2 3; do echo line$i; sleep 0.05; done", on_stdout=chunks.append)
    assert (streamed.exit_code, "".join(chunks)) == (0, "line1\nline2\nline3\n")
    assert [s.id for s in client.sandboxes.list(labels={"app": "emu-test"})] == [sandbox.id]
    assert client.sandboxes.list(labels={"app": "other"}).data == []
    sandbox.delete()
    assert emulator.live() == []


@pytest.mark.sandbox
def test_a_stream_cut_after_start_is_followed_from_its_cursor(emulator: Emulator, client: withruntime.Runtime) -> None:
    sandbox = client.sandboxes.create()
    emulator.faults.cut_streams = 1
    chunks: list[str] = []
    result = sandbox.exec("echo one; sleep 0.3; echo two", on_stdout=chunks.append)
    assert (result.exit_code, "".join(chunks)) == (0, "one\ntwo\n")
    follows = [r for r in emulator.requests if r.endswith("/output")]
    assert len(follows) == 1
    sandbox.delete()


@pytest.mark.sandbox
def test_forks_see_the_same_path_and_keep_their_own_files(emulator: Emulator, client: withruntime.Runtime) -> None:
    sandbox = client.sandboxes.create()
    home = sandbox.exec("pwd").stdout.strip()
    sandbox.exec(f"echo original > {home}/note; printf '#!/bin/sh\\ncat {home}/note\\n' > tool; chmod +x tool")
    copies = sandbox.fork(2)
    copies[0].exec("echo changed > note")
    assert [c.exec("pwd").stdout.strip() for c in copies] == [home, home]
    assert copies[0].exec(f"{home}/tool").stdout == "changed\n"
    assert copies[1].exec(f"{home}/tool").stdout == "original\n"
    assert sandbox.exec("cat note").stdout == "original\n"
    for box in (*copies, sandbox):
        box.delete()


@pytest.mark.sandbox
def test_files_upload_read_and_a_missing_file(emulator: Emulator, tmp_path: Path, client: withruntime.Runtime) -> None:
    sandbox = client.sandboxes.create()
    home = sandbox.exec("pwd").stdout.strip()
    (tmp_path / "tree" / "sub").mkdir(parents=True)
    (tmp_path / "tree" / "sub" / "b.txt").write_text("bee")
    sandbox.files.upload(str(tmp_path / "tree"), f"{home}/tree")
    assert sandbox.files.read(f"{home}/tree/sub/b.txt") == b"bee"
    sandbox.files.write(f"{home}/w.txt", b"written")
    assert sandbox.exec("cat w.txt").stdout == "written"
    with pytest.raises(withruntime.NotFoundError):
        sandbox.files.read(f"{home}/nothing")
    sandbox.delete()


@pytest.mark.sandbox
def test_503_and_429_are_retried_by_the_sdk(emulator: Emulator, client: withruntime.Runtime) -> None:
    sandbox = client.sandboxes.create()
    emulator.faults.unavailable, emulator.faults.unavailable_on = 2, ":exec"
    assert sandbox.exec("echo ok").stdout == "ok\n"
    assert sum(r.endswith(":exec") for r in emulator.requests) == 3
    emulator.faults.rate_limited, emulator.faults.rate_retry_ms = 1, 300
    started = time.monotonic()
    assert sandbox.exec("echo again").stdout == "again\n"
    assert time.monotonic() - started >= 0.25
    sandbox.delete()


def test_a_wrong_key_is_refused(emulator: Emulator) -> None:
    with pytest.raises(withruntime.AuthenticationError) as refused, withruntime.Runtime(api_key="rtk_wrong") as wrong:
        wrong.sandboxes.create()
    assert refused.value.code == "unauthorized"


@pytest.mark.sandbox
def test_commands_never_see_the_key(emulator: Emulator, client: withruntime.Runtime) -> None:
    sandbox = client.sandboxes.create()
    env = sandbox.exec("env").stdout
    assert KEY not in env and "RUNTIME_" not in env
    assert "HOME=" in env
    sandbox.delete()


@pytest.mark.sandbox
def test_a_sandbox_ends_at_its_time_limit(emulator: Emulator, client: withruntime.Runtime) -> None:
    started = time.monotonic()
    client.sandboxes.create(timeout_seconds=1)
    assert len(emulator.live()) == 1
    deadline = started + 10
    while emulator.live() != []:
        if time.monotonic() > deadline:
            pytest.fail(f"the sandbox was still live 10 s after its 1 s time limit: {emulator.live()}")
        time.sleep(0.01)  # paces the polling; the deadline above bounds it
    assert emulator.live() == []
    assert time.monotonic() - started >= 0.99  # at its limit, not before (less a hair for timer rounding)


# --- the network: own loopback, the allow list through the egress proxy ----------

# Run inside a sandbox as `python3 probe.py WHAT ARG...`; prints one answer.
PROBE = f"""
import http.client, socket, sys, urllib.error, urllib.request


def fetch(url):  # plain http through http_proxy, as pip's and npm's requests go
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return f"{{answer.status}} {{answer.read().decode()}}"
    except urllib.error.HTTPError as err:
        return f"{{err.code}} {{err.read().decode()}}"


def tunnel(host, port, path):  # a CONNECT tunnel, as https goes
    conn = http.client.HTTPConnection("127.0.0.1", {PORT}, timeout=10)
    conn.set_tunnel(host, int(port))
    conn.request("GET", path)
    answer = conn.getresponse()
    return f"{{answer.status}} {{answer.read().decode()}}"


def raw(*requests):  # requests sent at once on one connection to the proxy; all it answers
    with socket.create_connection(("127.0.0.1", {PORT}), timeout=10) as conn:
        conn.sendall("".join(r + "\\r\\n\\r\\n" for r in requests).encode())
        return b"".join(iter(lambda: conn.recv(65536), b"")).decode()


def direct(port):  # no proxy: the host's loopback itself
    try:
        socket.create_connection(("127.0.0.1", int(port)), timeout=5).close()
        return "connected"
    except OSError as err:
        return type(err).__name__


print({{"fetch": fetch, "tunnel": tunnel, "raw": raw, "direct": direct}}[sys.argv[1]](*sys.argv[2:]), end="")
"""
NO_BYPASS = ("env", "-u", "no_proxy", "-u", "NO_PROXY")  # localhost is in NO_PROXY, as in an image


class HostServer:
    """An HTTP/1.1 server (keep-alive) on the host's 127.0.0.1: a loopback
    service no sandbox may reach but through its proxy, by an allowed name.
    Notes every request's path."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server.paths.append(self.path)
                body = f"hello from the host: {self.path}".encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: Any) -> None:
                """Quiet: the tests read `paths`."""

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.http.server_address[1]


@pytest.fixture
def host() -> Iterator[HostServer]:
    server = HostServer()
    thread = threading.Thread(target=server.http.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.http.shutdown()
    server.http.server_close()


def proxy(emulator: Emulator, sandbox: Any) -> EgressProxy:
    """The sandbox's egress proxy, as the emulator runs it."""
    egress = emulator.boxes[sandbox.id].egress
    assert isinstance(egress, EgressProxy)
    return egress


def probe(sandbox: Any, *args: str, prefix: tuple[str, ...] = ()) -> str:
    """PROBE's answer from inside the sandbox."""
    home = sandbox.exec("pwd").stdout.strip()
    sandbox.files.write(f"{home}/probe.py", PROBE)
    result = sandbox.exec([*prefix, "python3", "probe.py", *args])
    assert (result.exit_code, result.stderr) == (0, "")
    return result.stdout


@pytest.mark.sandbox
def test_an_allowed_host_is_reached_through_the_proxy_only(
    emulator: Emulator, host: HostServer, client: withruntime.Runtime
) -> None:
    sandbox = client.sandboxes.create(network={"internet": True, "allow": ["localhost"]})
    port = str(host.port)
    assert probe(sandbox, "fetch", f"http://localhost:{port}/plain", prefix=NO_BYPASS) == (
        "200 hello from the host: /plain"
    )
    assert probe(sandbox, "tunnel", "LocalHost", port, "/tunnel") == "200 hello from the host: /tunnel"
    (copy,) = sandbox.fork(1)  # a fork's proxy is its own, with the same allow list
    assert probe(copy, "tunnel", "localhost", port, "/fork") == "200 hello from the host: /fork"
    assert probe(sandbox, "direct", port) == "ConnectionRefusedError"
    assert host.paths == ["/plain", "/tunnel", "/fork"]
    assert proxy(emulator, sandbox).asked == [("localhost", True), ("LocalHost", True)]
    assert proxy(emulator, copy).asked == [("localhost", True)]
    for box in (copy, sandbox):
        box.delete()


@pytest.mark.sandbox
def test_a_kept_alive_connection_cannot_carry_a_request_past_the_check(
    emulator: Emulator, host: HostServer, client: withruntime.Runtime
) -> None:
    """The second request names a host off the list (the same server by its
    address): the proxy sent the first on with `Connection: close`, so the
    server never reads the second, and the client is told to reconnect."""
    sandbox = client.sandboxes.create(network={"internet": True, "allow": ["localhost"]})
    one = f"GET http://localhost:{host.port}/one HTTP/1.1\r\nHost: localhost:{host.port}"
    two = f"GET http://127.0.0.1:{host.port}/two HTTP/1.1\r\nHost: 127.0.0.1:{host.port}"
    head, _, body = probe(sandbox, "raw", one, two).partition("\r\n\r\n")
    assert head.splitlines()[0] == "HTTP/1.1 200 OK"
    assert "Connection: close" in head.splitlines()
    assert body == "hello from the host: /one"
    assert host.paths == ["/one"]
    assert proxy(emulator, sandbox).asked == [("localhost", True)]
    sandbox.delete()


@pytest.mark.sandbox
def test_a_host_off_the_allow_list_gets_403_and_is_never_reached(
    emulator: Emulator, host: HostServer, client: withruntime.Runtime
) -> None:
    allowed = client.sandboxes.create(network={"internet": True, "allow": ["localhost"]})
    other = client.sandboxes.create(network={"internet": True, "allow": ["registry.example.invalid"]})
    port = str(host.port)
    for sandbox in (allowed, other):
        assert probe(sandbox, "fetch", f"http://127.0.0.1:{port}/plain", prefix=NO_BYPASS) == (
            "403 egress: 127.0.0.1 is not in this sandbox's allow list\n"
        )
        answer = probe(sandbox, "raw", f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}")
        assert answer.startswith("HTTP/1.1 403 Forbidden\r\n")
        assert answer.endswith("\r\n\r\negress: 127.0.0.1 is not in this sandbox's allow list\n")
    assert probe(other, "fetch", f"http://localhost:{port}/other", prefix=NO_BYPASS) == (
        "403 egress: localhost is not in this sandbox's allow list\n"
    )
    # the first sandbox's proxy, which lets localhost through, is not even visible to the other
    socket_path = emulator.boxes[allowed.id].dir / SOCKET_NAME
    assert (socket_path.is_socket(), proxy(emulator, allowed).path) == (True, socket_path)
    assert other.exec(f"test -e {socket_path} || echo hidden").stdout == "hidden\n"
    assert host.paths == []
    assert proxy(emulator, allowed).asked == [("127.0.0.1", False)] * 2
    assert proxy(emulator, other).asked == [("127.0.0.1", False)] * 2 + [("localhost", False)]
    for sandbox in (allowed, other):
        sandbox.delete()


@pytest.mark.sandbox
@pytest.mark.parametrize("internet", [True, False])
def test_the_hosts_loopback_is_never_reached_directly(
    emulator: Emulator, host: HostServer, internet: bool, client: withruntime.Runtime
) -> None:
    network = {"internet": True, "allow": ["localhost", "127.0.0.1"]} if internet else {"internet": False}
    sandbox = client.sandboxes.create(network=network)
    assert probe(sandbox, "direct", str(host.port)) == "ConnectionRefusedError"
    assert host.paths == []
    sandbox.delete()


@pytest.mark.sandbox
def test_no_internet_means_no_proxy_at_all(emulator: Emulator, client: withruntime.Runtime) -> None:
    sandbox = client.sandboxes.create(network={"internet": False})
    names = sandbox.exec("env | cut -d= -f1 | sort").stdout.split()
    assert [name for name in names if "proxy" in name.lower()] == []
    assert "HOME" in names
    assert probe(sandbox, "direct", str(PORT)) == "ConnectionRefusedError"
    assert sandbox.exec("ls -A ..").stdout.split() == ["tmp", "workspace"]
    assert emulator.boxes[sandbox.id].egress is None
    sandbox.delete()


@pytest.mark.sandbox
def test_the_proxy_variables_point_at_the_sandboxs_own_proxy(emulator: Emulator, client: withruntime.Runtime) -> None:
    sandbox = client.sandboxes.create(network={"internet": True, "allow": ["registry.example.invalid"]})
    lines = sandbox.exec("env | grep -i _proxy= | sort").stdout.splitlines()
    url = f"http://127.0.0.1:{PORT}"
    assert lines == [
        f"HTTPS_PROXY={url}",
        f"HTTP_PROXY={url}",
        "NO_PROXY=localhost,127.0.0.1",
        f"http_proxy={url}",
        f"https_proxy={url}",
        "no_proxy=localhost,127.0.0.1",
    ]
    assert sandbox.exec("ls -A ..").stdout.split() == ["egress.sock", "tmp", "workspace"]
    sandbox.delete()
