"""`gatetui web` in a real browser (Debian's chromium, through selenium):
the room's page shows a FAIL once the agent commits to a watched branch,
and every request without the token is refused, the websocket included.
Real processes: `gatetui serve` with the local backend on a small repo,
`gatetui web` on a free loopback port. CI runs this with `make
test-browser` (which installs chromium when missing); `make test` never
collects it (tests/conftest.py)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.repos import MakeRepo, git
from tests.support.supervising import BASE, SKIPPED

pytestmark = [pytest.mark.browser, pytest.mark.sandbox, pytest.mark.install]

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
# What the page's websocket receives, kept for the test to read: xterm.js
# draws the screen on a canvas, so the terminal's text is read from the
# stream that draws it (escape sequences taken out).
RECORD = """
window.__seen = [];
const Native = window.WebSocket;
window.WebSocket = function (url, protocols) {
  const ws = new Native(url, protocols);
  ws.addEventListener("message", (e) => {
    const text = typeof e.data === "string" ? e.data : new TextDecoder().decode(e.data);
    window.__seen.push(text);
  });
  return ws;
};
window.WebSocket.prototype = Native.prototype;
"""
PLAIN = r"return window.__seen.join('').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def started(args: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "gatetui", *args], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            yield process
        finally:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def wait_until(what: str, predicate: object, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def status(url: str, headers: dict[str, str] | None = None) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


@pytest.mark.skipif(
    not (CHROMIUM and DRIVER), reason="needs chromium and chromium-driver (make test-browser installs them)"
)
def test_the_room_sees_a_fail_appear_and_a_request_without_the_token_is_refused(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    repo = make_repo(BASE, SKIPPED)
    skipped = git(repo, "rev-parse", "agent/x")
    git(repo, "branch", "-f", "agent/x", "main")
    folder = Path(tempfile.mkdtemp(prefix="gatetui-room-", dir="/tmp"))
    sock, port, token = folder / "s.sock", free_port(), "room-token-for-the-test"
    serve = ["serve", str(repo), "--state-dir", str(tmp_path / "state"), "--socket", str(sock)]
    web = ["web", str(repo), "--socket", str(sock), "--port", str(port), "--token", token]
    page = f"http://127.0.0.1:{port}/?token={token}"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900"):
        options.add_argument(arg)
    try:
        with started(serve, tmp_path / "serve.log"), started(web, tmp_path / "web.log"):
            wait_until("the supervisor", sock.exists, 60)
            wait_until("the room's URL", lambda: page in (tmp_path / "web.log").read_text(), 60)
            root = f"http://127.0.0.1:{port}"
            assert [status(root + "/"), status(root + "/static/js/textual.js"), status(f"{root}/?token=wrong")] == [
                403,
                403,
                403,
            ]
            upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13"}
            assert status(root + "/ws", {**upgrade, "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}) == 403
            driver = webdriver.Chrome(service=Service(DRIVER), options=options)
            try:
                driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD})
                driver.get(page)
                wait_until("the branch on the page", lambda: "agent/x" in driver.execute_script(PLAIN), 60)
                git(repo, "update-ref", "refs/heads/agent/x", skipped)  # the agent's commit
                verdict = f"agent/x at {skipped[:7]}: FAIL in "  # the run's title, once the verdict is in
                wait_until("the FAIL verdict on the page", lambda: verdict in driver.execute_script(PLAIN))
                driver.save_screenshot(str(tmp_path / "room.png"))
            finally:
                driver.quit()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert f"agent/x at {skipped[:7]}: fail" in (tmp_path / "serve.log").read_text()
