"""A dependency layer's bytecode, compiled once, for every run that uses it.

Every test run reads and writes bytecode only under a pycache prefix of its
own (nothing planted in a `__pycache__` is loaded), so without a cache each
Python process compiled pytest, the layer's other distributions and the
standard library modules they import again: about 0.5 s of CPU per pytest
start on a small set, paid by every run, rerun and mutant.

This script runs in the layer's build workspace (where no code of head's
ever ran) after the pinned install. It starts the layer's own pytest once
(collecting nothing, in an empty folder) and imports each top-level module
its distributions install, under a prefix of its own, then compiles what
no import reached of the layer; it keeps `.layer-cache/layer/` (the
layer's files, by their path in the layer) and `.layer-cache/root/<path>/`
(the standard library modules those imports compiled, by their absolute
path), and nothing else. The bytecode is written by processes running the
layer's third-party code: no more trust than the runs already give that
code, which every one of them imports. The store seals the folder and
keeps it in the layer's manifest; each run is shown it read-only under its
own prefix. Stdlib only.
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
