"""Regenerate the docs' screenshots (docs/tui-fail.svg, docs/tui-review.svg) from real gate runs on two samples.

    .venv/bin/python docs/make_screenshots.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.test_tui_support import SIZE, cell, make_app, sample_at_base, wait_for  # noqa: E402
from gatetui.lab.demo import move_branch  # noqa: E402

DOCS = Path(__file__).resolve().parent


async def shoot(name: str, verdict: str, keys: tuple[str, ...], filename: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo, head, _ = sample_at_base(name, Path(tmp) / name)
        app = make_app(repo, Path(tmp))
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: f"agent/{name}" in app.supervisor.branches)
            move_branch(repo, f"agent/{name}", head)
            await wait_for(pilot, lambda: cell(pilot, "#branches", f"agent/{name}", "verdict") == verdict)
            await pilot.press("down", "down", "down", *keys)  # the runs check's log, or the review
            await pilot.pause(0.5)
            app.save_screenshot(filename, str(DOCS))
            await pilot.press("q")


async def main() -> None:
    await shoot("skip_marker", "FAIL", (), "tui-fail.svg")
    await shoot("loosened_assertion", "REVIEW", ("v",), "tui-review.svg")


if __name__ == "__main__":
    asyncio.run(main())
