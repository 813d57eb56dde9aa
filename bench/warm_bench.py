"""`make bench`, warm gates: a gate cold and warm against two floors a person sets by hand.

The project has five common dependencies (pydantic, requests, rich,
python-dateutil, pyyaml) and a test extra (pytest, hypothesis). Every
distribution comes from a local wheelhouse the bench fills once (downloaded
with the user's own index configuration into the bench's cache folder) and
serves as a simple index on the host's loopback, the only index either side
is given: nothing is downloaded from elsewhere while it is timed.

Printed side by side, from one run:
- pip by hand: a fresh venv, `pip install -e .[test]`, the suite once
- uv by hand, its cache warm: the same with `uv venv` and `uv pip install`
- the gate cold: an empty layer store (the layer is built in the run)
- the gate warm: the next commit, the same dependencies (the layer is used)
- the gate as it was (pip, no layer), for reference
Goals: cold <= 0.8 of the pip floor; warm <= 1.5 of the uv floor.
The floors run on the host, as a person would; the gates in the local
backend's sandboxes (as root: separate uids and namespaces).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import http.server
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gatetui.backends.local import LocalBackend
from gatetui.gate.events import RunFinished
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from gatetui.stacks.python.installer import find_uv

DEPENDENCIES = ("pydantic", "requests", "rich", "python-dateutil", "pyyaml")
TEST_EXTRA = ("pytest", "hypothesis")
BUILD = ("setuptools",)
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
PROJECT = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "warmly"\nversion = "0"\ndependencies = {list(DEPENDENCIES)!r}\n'.replace("'", '"')
        + f"[project.optional-dependencies]\ntest = {list(TEST_EXTRA)!r}\n".replace("'", '"')
        + '[tool.setuptools]\npackages = ["warmly"]\n'
    ),
    "warmly/__init__.py": (
        "import dateutil.parser\nimport pydantic\nimport requests\nimport rich\nimport yaml\n\n\n"
        "class Point(pydantic.BaseModel):\n    x: int\n    y: int\n\n\n"
        "def load(text):\n    return Point(**yaml.safe_load(text))\n"
    ),
    "tests/test_warmly.py": (
        "from hypothesis import given, strategies as st\n\nfrom warmly import load\n\n\n"
        "@given(st.integers(), st.integers())\ndef test_load(x, y):\n    assert load(f'x: {x}\\ny: {y}').x == x\n"
    ),
}


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gatetui-bench"


def wheelhouse() -> Path:
    """Filled once with the user's index configuration (the only network
    the bench uses); reused after."""
    folder = cache_dir() / "wheelhouse"
    if not any(folder.glob("*.whl")):
        folder.mkdir(parents=True, exist_ok=True)
        print(f"filling the wheelhouse {folder} (once)", flush=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--only-binary",
                ":all:",
                "-d",
                str(folder),
                *DEPENDENCIES,
                *TEST_EXTRA,
                *BUILD,
            ],
            check=True,
        )
    return folder


def simple_index(wheels: Path, root: Path) -> Path:
    """The wheelhouse as a registry serves it: a PEP 503 page per project,
    each file with its hash. (No PEP 658 metadata files: this machine's pip
    23.2 refuses one whose Name is spelled otherwise than the project's
    page, PyYAML for pyyaml.)"""
    projects: dict[str, list[str]] = {}
    (root / "files").mkdir(parents=True)
    for wheel in sorted(wheels.glob("*.whl")):
        data = wheel.read_bytes()
        (root / "files" / wheel.name).write_bytes(data)
        name = re.sub(r"[-_.]+", "-", wheel.name.split("-", 1)[0]).lower()
        projects.setdefault(name, []).append(
            f'<a href="../../files/{wheel.name}#sha256={hashlib.sha256(data).hexdigest()}">{wheel.name}</a><br>'
        )
    for name, links in projects.items():
        (root / "simple" / name).mkdir(parents=True)
        (root / "simple" / name / "index.html").write_text(
            "<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n"
        )
    return root


@contextmanager
def served(folder: Path) -> Iterator[str]:
    """The wheelhouse on the host's loopback as a simple index (the
    sandboxes' installs have the host's network; its file system below
    /tmp they do not see): the index URL."""
    with tempfile.TemporaryDirectory(prefix="gatetui-bench-index-") as tmp:
        handler = functools.partial(_Quiet, directory=str(simple_index(folder, Path(tmp))))
        server = _Server(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
        finally:
            server.shutdown()
            server.server_close()
            thread.join()


class _Server(http.server.ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 drops a resolver's burst of connections: a 1 s SYN retry each


class _Quiet(http.server.SimpleHTTPRequestHandler):
    disable_nagle_algorithm = True  # else each answer waits ~40 ms on the client's delayed ACK, as no registry does

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        return None


def git(repo: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True)


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    for rel, text in PROJECT.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    for n in (1, 2, 3):  # agent/cold, agent/warm, agent/plain: one commit each, the same dependencies
        git(repo, "checkout", "-q", "-b", f"agent/{n}", "main")
        (repo / "warmly" / "__init__.py").write_text(PROJECT["warmly/__init__.py"] + f"\nVERSION = {n}\n")
        git(repo, "commit", "-qam", f"head {n}")
    return repo


def by_hand(repo: Path, steps: list[str], env: dict[str, str]) -> float:
    """A person's install and one suite run, on the host, in a fresh copy."""
    with tempfile.TemporaryDirectory(prefix="gatetui-bench-hand-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "clone", "-q", str(repo), str(tree)], check=True)
        start = time.monotonic()
        for step in steps:
            done = subprocess.run(["/bin/sh", "-c", step], cwd=tree, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"by hand, `{step}` failed: {done.stderr[-2000:]}")
        return time.monotonic() - start


def gate(repo: Path, head: str, layers: Path | None, work: Path) -> tuple[float, RunFinished]:
    async def run() -> RunFinished:
        plan = await asyncio.to_thread(make_plan, GateRequest(repo, "main", head))
        async for event in run_gate(plan, LocalBackend(work_root=work, layers=layers)):
            if isinstance(event, RunFinished):
                return event
        raise SystemExit("the gate ended without a verdict")

    start = time.monotonic()
    finished = asyncio.run(run())
    return time.monotonic() - start, finished


def phases(run: RunFinished) -> str:
    """Where a gate's time went: the install check, then the runs (side by side)."""
    seconds = {r.id.value: r.seconds for r in run.results}
    return f"(install {seconds.get('install', 0):.1f} s, runs {seconds.get('runs', 0):.1f} s)"


def main() -> int:
    uv = find_uv()
    if uv is None:
        raise SystemExit("uv is not installed here: `make venv` installs it")
    with tempfile.TemporaryDirectory(prefix="gatetui-bench-warm-") as tmp, served(wheelhouse()) as index:
        root = Path(tmp)
        repo = make_repo(root)
        env = {**os.environ, "PIP_INDEX_URL": index, "PIP_CONFIG_FILE": os.devnull}
        for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX"):
            env.pop(name, None)
            os.environ.pop(name, None)
        os.environ.update({k: env[k] for k in ("PIP_INDEX_URL", "PIP_CONFIG_FILE")})
        hand = {**env, "UV_CACHE_DIR": str(root / "uv-cache"), "PIP_CACHE_DIR": str(root / "pip-cache")}
        pip_steps = [
            "python3 -m venv --without-pip .venv",
            "python3 -m pip --python .venv/bin/python install -q -e '.[test]'",
            ".venv/bin/python -m pytest -q -p no:cacheprovider",
        ]
        uv_steps = [
            f"{uv} venv -q .venv",
            f"{uv} pip install -q --python .venv/bin/python --no-config --index-url {index} -e '.[test]'",
            ".venv/bin/python -m pytest -q -p no:cacheprovider",
        ]
        by_hand(repo, pip_steps, hand)  # the caches warm, for both
        by_hand(repo, uv_steps, hand)
        pip_floor, uv_floor = by_hand(repo, pip_steps, hand), by_hand(repo, uv_steps, hand)
        layers = root / "layers"
        cold, cold_run = gate(repo, "agent/1", layers, root / "work")
        warm, warm_run = gate(repo, "agent/2", layers, root / "work")
        os.environ["GATETUI_UV"] = "off"
        plain, plain_run = gate(repo, "agent/3", None, root / "work")
        del os.environ["GATETUI_UV"]
    runs = {"cold": cold_run, "warm": warm_run, "plain": plain_run}
    for name, run in runs.items():
        if run.verdict.value != "pass":
            print(
                f"warning: the {name} gate's verdict is {run.verdict.value}: "
                + "; ".join(f"{r.id.value} {r.status.value} {r.detail[:200]}" for r in run.results)
            )
    print(f"pip by hand (fresh venv, install, one run)    {pip_floor:6.2f} s")
    print(f"uv by hand, cache warm                        {uv_floor:6.2f} s")
    print(f"gate cold ({cold_run.digests.cache_words or 'no layer'})".ljust(46) + f"{cold:6.2f} s  {phases(cold_run)}")
    print(f"gate warm ({warm_run.digests.cache_words or 'no layer'})".ljust(46) + f"{warm:6.2f} s  {phases(warm_run)}")
    print(f"gate as it was (pip, no layer)                {plain:6.2f} s  {phases(plain_run)}")
    print(f"figure 5  cold / pip floor = {cold / pip_floor:.2f}   (goal <= 0.8)")
    print(f"figure 6  warm / uv floor  = {warm / uv_floor:.2f}   (goal <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
