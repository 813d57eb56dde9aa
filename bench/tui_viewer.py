"""A viewer measured in a process of its own, as `gatetui view` runs: the
viewer's app on a `RemoteSupervisor`, attached to the socket of the
supervisor that bench/tui_bench.py runs (which starts this script).

    python bench/tui_viewer.py SOCKET commits
        says {"ready": true} once it watches; then for each {"sha", "at"}
        line on stdin (`at`: the monotonic clock when the bench moved the
        branch) answers {"ms": ...} when its screen shows a check of that
        commit's run no longer waiting; until stdin ends.
    python bench/tui_viewer.py SOCKET keys
        says {"ready": true}, then presses keys while the install streams.

Its last line is its `Figures` (JSON): what it measured, and its own peak RSS.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tui_probes import SIZE, Figures, KeyProbe, Shown, first_row_moved, now, peak_rss_mb, press_while_streaming

from gatetui.supervise.remote import RemoteSupervisor  # noqa: E402
from gatetui.tui.viewer import ViewerApp  # noqa: E402

OUT = sys.stdout  # the app takes sys.stdout over while it runs: the bench reads this one


def say(data: dict[str, Any] | Figures) -> None:
    OUT.write((data.to_json() if isinstance(data, Figures) else json.dumps(data)) + "\n")
    OUT.flush()


async def commits(app: Shown, figures: Figures) -> None:
    while line := await asyncio.to_thread(sys.stdin.readline):
        ask = json.loads(line)
        while not first_row_moved(app, ask["sha"]):
            await asyncio.sleep(0.002)
        figures.commits.append((now() - ask["at"]) * 1000)
        say({"ms": figures.commits[-1]})


async def main(socket: Path, mode: str) -> None:
    figures, probe = Figures(), KeyProbe()
    remote = RemoteSupervisor(socket)
    app = ViewerApp(remote)
    async with app.run_test(size=SIZE, message_hook=probe.hook) as pilot:
        while not remote.branches:
            await asyncio.sleep(0.01)
        say({"ready": True})
        if mode == "commits":
            await commits(app, figures)
        else:
            await press_while_streaming(app, probe, figures)
        await pilot.press("q")
    figures.rss_mb = peak_rss_mb()
    say(figures)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2]))
