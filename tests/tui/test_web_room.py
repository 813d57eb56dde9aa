"""`gatetui web`'s guard over textual-serve's routes, in-process through
aiohttp's test client: every request without the room's token is refused
(the page, its scripts, the websocket), the token in the URL sets the
cookie the page's own requests carry, a websocket from another site's page
is refused, and the page's websocket URL is the host the room typed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp import test_utils

from gatetui.tui.web import COOKIE, RoomServer, is_loopback, room_token, view_command

TOKEN = "the-rooms-token"
UPGRADE = {
    "Connection": "Upgrade",
    "Upgrade": "websocket",
    "Sec-WebSocket-Version": "13",
    "Sec-WebSocket-Key": "x" * 22 + "==",
}


async def client() -> test_utils.TestClient[Any, Any]:
    app = await RoomServer("true", "127.0.0.1", 8000, TOKEN)._make_app()
    test = test_utils.TestClient(test_utils.TestServer(app))
    await test.start_server()
    return test


@pytest.mark.asyncio
async def test_without_the_token_everything_is_refused() -> None:
    test = await client()
    try:
        answers = [
            (await test.get(path, headers=headers)).status
            for path, headers in (("/", {}), ("/?token=wrong", {}), ("/static/js/textual.js", {}), ("/ws", UPGRADE))
        ]
    finally:
        await test.close()
    assert answers == [403, 403, 403, 403]


@pytest.mark.asyncio
async def test_the_token_in_the_url_lets_the_pages_own_requests_in() -> None:
    test = await client()
    try:
        page = await test.get(f"/?token={TOKEN}")
        text = await page.text()
        script = await test.get("/static/js/textual.js")  # the cookie, not the URL, carries the token
        host = f"{test.host}:{test.port}"
        other_site = await test.get("/ws", headers={**UPGRADE, "Origin": "http://elsewhere.example"})
    finally:
        await test.close()
    assert (page.status, script.status, other_site.status) == (200, 200, 403)
    cookie = page.cookies[COOKIE]
    assert (cookie.value, cookie["httponly"], cookie["samesite"]) == (TOKEN, True, "Strict")
    assert f'data-session-websocket-url="ws://{host}/ws"' in text


def test_a_token_is_made_on_loopback_and_needed_elsewhere() -> None:
    made = room_token("127.0.0.1", None)
    assert len(made) == 24 and made != room_token("::1", None)
    assert room_token("0.0.0.0", "given") == "given"
    assert [is_loopback(h) for h in ("localhost", "127.0.0.2", "::1", "0.0.0.0", "192.0.2.1", "room.example")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]


def test_each_page_runs_this_interpreters_viewer_with_its_words_quoted(tmp_path: Path) -> None:
    repo = tmp_path / "a repo; rm -rf"
    repo.mkdir()
    command = view_command(repo, tmp_path / "s.sock")
    assert command.endswith(f"-m gatetui view '{repo}' --socket {tmp_path / 's.sock'}")
