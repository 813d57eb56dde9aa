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
load: what the interpreter would load without a prefix, and 0.3 s of
compiling the warm-up no longer does). It then starts the layer's own
pytest once (collecting nothing, in an empty folder) and imports each
top-level module its distributions install, under a prefix of its own, then
compiles what no import reached of the layer; it keeps
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


# Imports every top-level module the layer's distributions install, each
# in its own try (one that fails to import is no reason to stop).
IMPORT_ALL = """
import importlib, sys
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except BaseException:
        pass
"""


def top_level_names(site: str) -> list[str]:
    """The importable top-level names in a site-packages folder."""
    names = set()
    for entry in os.listdir(site) if os.path.isdir(site) else ():
        stem, ext = os.path.splitext(entry)
        if entry.startswith(("_", ".")) or "-" in entry or ext in (".pth", ".dist-info", ".data"):
            continue
        if ext == ".py" or (not ext and os.path.isfile(os.path.join(site, entry, "__init__.py"))):
            names.add(stem)
    return sorted(n for n in names if n.isidentifier())


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


def warm_up(prefix: str) -> None:
    """Start the layer's pytest once (collecting nothing, in an empty
    folder) and import every top-level module its distributions install,
    both at once, their bytecode written under `prefix`."""
    python = os.path.abspath(os.path.join(LAYER, "bin", "python"))
    lib = os.path.join(LAYER, "lib")
    if not os.path.exists(python) or not os.path.isdir(lib):
        return
    sites = [os.path.join(lib, d, "site-packages") for d in sorted(os.listdir(lib))]
    names = [n for site in sites for n in top_level_names(site)]
    with tempfile.TemporaryDirectory() as empty:
        started = []
        for argv in ([python, "-X", f"pycache_prefix={prefix}", "-m", "pytest", "-q", "--collect-only", "-p",
                      "no:cacheprovider"], [python, "-X", f"pycache_prefix={prefix}", "-c", IMPORT_ALL, *names]):
            try:
                started.append(subprocess.Popen(argv, cwd=empty, stdin=subprocess.DEVNULL,
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            except OSError:
                continue
        for process in started:
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
    warm_up(prefix)
    sys.pycache_prefix = prefix  # compileall writes where a run with this prefix reads
    compileall.compile_dir(os.path.join(here, LAYER, "lib"), quiet=2, workers=0)  # what no import reached
    if os.path.isdir(prefix + os.path.join(here, LAYER)):
        shutil.move(prefix + os.path.join(here, LAYER), os.path.join(OUT, "layer"))
    if os.path.isdir(prefix + stdlib):
        os.makedirs(os.path.dirname(os.path.join(OUT, "root") + stdlib))
        shutil.move(prefix + stdlib, os.path.join(OUT, "root") + stdlib)
    shutil.rmtree(prefix, ignore_errors=True)  # bytecode of anything else is not kept
    return 0


if __name__ == "__main__":
    sys.exit(main())
