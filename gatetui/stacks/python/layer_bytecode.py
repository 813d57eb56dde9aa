"""A dependency layer's bytecode, compiled once, for every run that uses it.

Every test run reads and writes bytecode only under a pycache prefix of its
own (nothing planted in a `__pycache__` is loaded), so without a cache each
Python process compiled pytest, the layer's other distributions and the
standard library modules they import again: about 0.5 s of CPU per pytest
start on a small set, paid by every run, rerun and mutant.

This script runs in the layer's build workspace (where no code of head's
ever ran) after the pinned install. It first copies the interpreter's own
bytecode of its standard library to where a run with the prefix reads it
(only files Python checks against their source's mtime and size at every
load: what the interpreter would load without a prefix). Then, side by
side: it compiles every module of the layer (compileall, in this process)
and starts the layer's own pytest once (collecting nothing, in an empty
folder), for what only a pytest start writes: the assertion-rewritten
bytecode of the plugins its distributions register (hypothesis' about 75
modules, rewritten again by every run without it). Both write the same
file for a module they both reach, each atomically. It keeps
`.layer-cache/layer/` (the layer's files, by their path in the layer) and
`.layer-cache/root/<path>/` (the standard library's bytecode, by its
absolute path), and nothing else. The bytecode is written by processes
running the layer's third-party code: no more trust than the runs already
give that code, which every one of them imports. The store seals the folder
and keeps it in the layer's manifest; each run is shown it read-only under
its own prefix. Stdlib only.
"""

from __future__ import annotations

import compileall
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

LAYER, OUT = ".layer", ".layer-cache"
TAG = f".{sys.implementation.cache_tag}.pyc"
# Test packages of the standard library, and third-party folders inside it.
NOT_STDLIB = frozenset({"site-packages", "dist-packages", "test", "tests", "idle_test", "turtledemo"})


def checked_at_load(path: str) -> bool:
    """A pyc Python checks against its source's mtime and size (PEP 552
    flags 0), never one taken on trust (hash-based, unchecked)."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(16)
    except OSError:
        return False
    return len(header) == 16 and header[4:8] == bytes(4)


def seed_stdlib(prefix: str, stdlib: str) -> None:
    """The interpreter's own bytecode of its standard library, copied to
    where a process with `prefix` reads it."""
    for folder, dirs, files in os.walk(stdlib):
        dirs[:] = sorted(d for d in dirs if d not in NOT_STDLIB)
        if os.path.basename(folder) != "__pycache__":
            continue
        source = os.path.dirname(folder)
        for name in files:
            stem = name[: -len(TAG)] if name.endswith(TAG) else ""
            if not stem or "." in stem or not os.path.isfile(os.path.join(source, stem + ".py")):
                continue
            if checked_at_load(os.path.join(folder, name)):
                os.makedirs(prefix + source, exist_ok=True)
                shutil.copyfile(os.path.join(folder, name), os.path.join(prefix + source, name))


def pytest_start(prefix: str, empty: str) -> subprocess.Popen[bytes] | None:
    """The layer's pytest started once in `empty`, collecting nothing, its
    bytecode (the plugins' rewritten by pytest) written under `prefix`;
    None where the layer has no interpreter to start."""
    python = os.path.abspath(os.path.join(LAYER, "bin", "python"))
    if not os.path.exists(python):
        return None
    argv = [python, "-X", f"pycache_prefix={prefix}", "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider"]
    try:
        return subprocess.Popen(
            argv, cwd=empty, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    except OSError:
        return None


def ended(process: subprocess.Popen[bytes] | None) -> None:
    if process is None:
        return
    try:
        process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def main() -> int:
    here = os.getcwd()
    stdlib = sysconfig.get_paths()["stdlib"]
    prefix = tempfile.mkdtemp(prefix="bytecode-")
    shutil.rmtree(OUT, ignore_errors=True)
    os.mkdir(OUT)
    seed_stdlib(prefix, stdlib)
    with tempfile.TemporaryDirectory() as empty:
        started = pytest_start(prefix, empty)  # on one core, while the others compile
        try:
            sys.pycache_prefix = prefix  # compileall writes where a run with this prefix reads
            if os.path.isdir(os.path.join(here, LAYER, "lib")):
                workers = max(1, (os.cpu_count() or 2) - 1)  # 1: in this process, no pool to start
                compileall.compile_dir(os.path.join(here, LAYER, "lib"), quiet=2, workers=workers)
        finally:
            ended(started)
    if os.path.isdir(prefix + os.path.join(here, LAYER)):
        shutil.move(prefix + os.path.join(here, LAYER), os.path.join(OUT, "layer"))
    if os.path.isdir(prefix + stdlib):
        os.makedirs(os.path.dirname(os.path.join(OUT, "root") + stdlib))
        shutil.move(prefix + stdlib, os.path.join(OUT, "root") + stdlib)
    shutil.rmtree(prefix, ignore_errors=True)  # bytecode of anything else is not kept
    return 0


if __name__ == "__main__":
    sys.exit(main())
