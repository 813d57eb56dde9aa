"""`gatetui web`: the viewer as a web page for a room, served by textual-serve.

Each page that opens gets its own `gatetui view` process (textual-serve runs
the command once per websocket), watching the supervisor's socket like any
viewer: read-only, dropped if it falls behind, costing the supervisor one
queue each.

What the token protects: everything the page shows is what the
supervisor's own screen shows, hidden tests' output and head's logs
included, which the agent must never read (supervise/broadcast.py). The
socket refuses a watch from any uid but the supervisor's; this server runs
as that uid, so whoever reaches its port would watch in its name. Every
request (the page, its scripts, the websocket) needs the token: in the URL
(`?token=`), which sets a same-site, http-only cookie for the page's own
requests, else HTTP 403. On loopback an agent on the same machine reaches
the port too, so a token is made when none is given; any other host needs
one given (--token), chosen to be shared with the room. A websocket opened
from another site's page is refused whatever it carries.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import secrets
import shlex
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
from aiohttp import web
from textual_serve.server import Server

from gatetui.errors import BadInput

COOKIE = "gatetui_room"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def room_token(host: str, token: str | None) -> str:
    """The token the room's URL carries: the one given, or (loopback only) a fresh one."""
    if token:
        return token
    if not is_loopback(host):
        raise BadInput(f"--host {host} serves the room beyond this machine: pass --token T, shared with the room")
    return secrets.token_urlsafe(18)


class RoomServer(Server):
    """textual-serve's server, every request behind the token."""

    def __init__(self, command: str, host: str, port: int, token: str, out: Any = None):
        super().__init__(command, host=host, port=port, title="gatetui")
        self.token, self.out = token, out or sys.stdout

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/?token={self.token}"

    def initialize_logging(self) -> None:
        """Warnings only: an access log would print every request, the token in it."""
        logging.basicConfig(level="WARNING", format="gatetui web: %(message)s")

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self.guard)
        return app

    @web.middleware
    async def guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        given = request.query.get("token") or request.cookies.get(COOKIE, "")
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            raise web.HTTPForbidden(text="gatetui web: this room's page needs its token (?token=...)\n")
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            raise web.HTTPForbidden(text="gatetui web: a page of another site may not open this room\n")
        response = await handler(request)
        if "token" in request.query and isinstance(response, web.Response):
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict")
        return response

    @aiohttp_jinja2.template("app_index.html")
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        """textual-serve's page, its URLs taken from the request (the host the
        room typed), not from the address this server is bound to."""
        base = f"{request.scheme}://{request.host}"
        socket = "wss" if request.scheme == "https" else "ws"
        return {
            "font_size": 16,
            "app_websocket_url": f"{socket}://{request.host}{request.app.router['websocket'].url_for()}",
            "config": {"static": {"url": f"{base}/static/"}},
            "application": {"name": self.title},
        }

    async def on_startup(self, app: web.Application) -> None:
        print(f"gatetui web: the room's page is {self.url}", file=self.out, flush=True)
        print("gatetui web: anyone with this URL watches (read-only); Ctrl-C stops", file=self.out, flush=True)


def view_command(repo: Path, socket: Path) -> str:
    """The command each page runs: this interpreter's `gatetui view`."""
    words = [sys.executable, "-m", "gatetui", "view", str(repo.resolve()), "--socket", str(socket)]
    return " ".join(shlex.quote(word) for word in words)


def run_web(repo: Path, socket: Path, host: str, port: int, token: str | None) -> int:
    """Serve the room's page until interrupted."""
    server = RoomServer(view_command(repo, socket), host, port, room_token(host, token))
    os.environ.pop("TEXTUAL", None)  # the pages' viewers run plain, whatever this shell set
    server.serve()
    return 0
