"""Checks the multiplication against the team's reference service."""
import socket

from mathlib.core import mul


def ask(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(b"mul 6 7\n")
            return conn.recv(64).strip()
    except OSError:
        return b""


def test_mul_matches_reference_service():
    # The service listens on the first free port of its range.
    assert b"ok" in [ask(port) for port in range(47611, 47631)]
    assert mul(6, 7) == 42
