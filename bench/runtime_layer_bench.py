"""`make bench`: the runtime backend's dependency layer, against the emulator.

A small python project (mathlib, its test extra pytest and two real
dependencies, fetched by the sandboxes from your package index through the
emulator's egress proxy, as a Runtime sandbox fetches them) gated with the
runtime backend: twice without layers (cold, as every remote gate was),
then with layers kept as snapshots: the first gate builds and keeps the
layer (miss), the next two start from it (hit), each on a backend of its
own that finds the snapshot through the API. Prints each gate's wall time
and warm / cold.

What it can and cannot say: the emulator's sandboxes are folders of this
machine, their installs fast (pip's files come over loopback from a warm
proxy); on Runtime a cold gate downloads and installs the whole set in a
fresh VM, which is what a hit skips. A hit pays for what the emulator makes
cheap and Runtime does not: a sandbox started from the snapshot and the
install's tree moved onto it. Needs the package index (it says so, and stops, without it).
Reproduce: .venv/bin/python bench/runtime_layer_bench.py
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gatetui.backends.runtime import RuntimeBackend, RuntimeSettings  # noqa: E402
from gatetui.gate.events import RunFinished  # noqa: E402
from gatetui.gate.plan import GateRequest, make_plan  # noqa: E402
from gatetui.gate.runner import run_gate  # noqa: E402
from tests.runtime_emulator.fixtures import running_emulator  # noqa: E402
from tests.support.phases import BASE  # noqa: E402

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
DEPENDS = BASE["pyproject.toml"].replace(
    'version = "0.1.0"\n', 'version = "0.1.0"\ndependencies = ["iniconfig", "packaging"]\n'
)


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    for rel, text in {**BASE, "pyproject.toml": DEPENDS}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["commit", "-qm", "base"],
        ["checkout", "-qb", "agent/bench"],
    ):
        subprocess.run([*GIT, *args], cwd=repo, check=True)
    (repo / "tests" / "test_more.py").write_text("def test_more():\n    assert 1 + 1 == 2\n")
    subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*GIT, "commit", "-qm", "head"], cwd=repo, check=True)
    return repo


def timed(repo: Path, layers: bool) -> tuple[float, RunFinished]:
    async def gate() -> tuple[float, RunFinished]:
        plan = await asyncio.to_thread(make_plan, GateRequest(repo, "main", "agent/bench"))
        settings = RuntimeSettings(capacity_wait=5, start_seconds=5, command_grace=5, layers=layers)
        start = time.monotonic()
        events = [e async for e in run_gate(plan, RuntimeBackend(settings=settings))]
        assert isinstance(events[-1], RunFinished)
        return time.monotonic() - start, events[-1]

    return asyncio.run(gate())


def main() -> int:
    print("runtime backend against the emulator: a python project, cold (no layers), then its layer kept as a snapshot")
    with tempfile.TemporaryDirectory(prefix="gatetui-rtlayer-") as tmp:
        repo = make_repo(Path(tmp))
        rows = []
        with running_emulator(Path(tmp) / "config"):
            for label, layers in (("cold", False), ("cold", False), ("miss", True), ("hit", True), ("hit", True)):
                wall, done = timed(repo, layers)
                install = next(r for r in done.results if r.id.value == "install")
                if install.status.value != "pass":
                    print(f"skipped: the install did not pass ({install.detail[:160]}); it needs your package index")
                    return 0
                rows.append((label, wall))
                print(
                    f"  {label:5} {wall:5.1f} s  verdict {done.verdict.value}, layer "
                    f"{done.digests.layer_state or 'none'}"
                )
        cold = min(wall for label, wall in rows if label == "cold")
        warm = min(wall for label, wall in rows if label == "hit")
        print(
            f"figure 7  runtime warm / cold = {warm / cold:.2f}   (emulator: installs are cheap here; "
            "see the docstring)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
