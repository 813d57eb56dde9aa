"""A dependency layer's bytecode, compiled once, for every run that uses it.

Every test run reads and writes bytecode only under a pycache prefix of its
own (nothing planted in a `__pycache__` is loaded), so without a cache each
Python process compiled pytest, the layer's other distributions and the
standard library modules they import again: about 0.5 s of CPU per pytest
start on a small set, paid by every run, rerun and mutant.

This script runs in the layer's build workspace (where no code of head's
ever ran), with the machine's interpreter in isolated mode, after the
pinned install. It writes `.layer-cache/layer/` (the layer's files, by
their path in the layer) and `.layer-cache/root/<absolute path>/` (the
standard library modules a pytest start imports, by their absolute path).
Which library modules is learnt by starting the layer's own pytest once
(collecting nothing, in an empty folder) and importing each top-level
module its distributions install, under a throwaway prefix (the third-party
code that runs there is the same the runs will load); that bytecode is
then deleted, and every file is compiled afresh by this
process, which runs no third-party code: the warm-up only chooses names.
The store seals the folder and keeps it in the layer's manifest; each run
is shown it read-only under its own prefix. Stdlib only.
"""

from __future__ import annotations

import compileall
import os
import py_compile
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


def library_modules(stdlib: str) -> list[str]:
    """The standard library sources a pytest start in the layer imports,
    and those its distributions' own modules import."""
    python = os.path.join(LAYER, "bin", "python")
    if not os.path.exists(python):
        return []
    sites = [os.path.join(LAYER, "lib", d, "site-packages") for d in os.listdir(os.path.join(LAYER, "lib"))]
    names = [n for site in sites for n in top_level_names(site)]
    with tempfile.TemporaryDirectory() as warm, tempfile.TemporaryDirectory() as empty:
        python = os.path.abspath(python)
        for argv in ([python, "-X", f"pycache_prefix={warm}", "-m", "pytest", "-q", "--collect-only", "-p",
                      "no:cacheprovider"], [python, "-X", f"pycache_prefix={warm}", "-c", IMPORT_ALL, *names]):
            try:
                subprocess.run(argv, cwd=empty, timeout=120, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            except (OSError, subprocess.SubprocessError):
                continue
        mirror = warm + stdlib
        found = []
        for folder, _dirs, files in os.walk(mirror):
            for name in files:
                if name.endswith(TAG):
                    source = os.path.join(stdlib + folder[len(mirror):], name[: -len(TAG)] + ".py")
                    if os.path.isfile(source) and not os.path.islink(source):
                        found.append(source)
        return sorted(found)


def main() -> int:
    here = os.getcwd()
    stdlib = sysconfig.get_paths()["stdlib"]
    prefix = tempfile.mkdtemp(prefix="bytecode-")
    shutil.rmtree(OUT, ignore_errors=True)
    os.mkdir(OUT)
    chosen = library_modules(stdlib)
    sys.pycache_prefix = prefix  # py_compile writes where a run with this prefix reads
    compileall.compile_dir(os.path.join(here, LAYER, "lib"), quiet=2, force=True, workers=0)
    for source in chosen:
        try:
            py_compile.compile(source, doraise=True)
        except py_compile.PyCompileError:
            continue
    if os.path.isdir(prefix + os.path.join(here, LAYER)):
        shutil.move(prefix + os.path.join(here, LAYER), os.path.join(OUT, "layer"))
    if os.path.isdir(prefix + stdlib):
        os.makedirs(os.path.dirname(os.path.join(OUT, "root") + stdlib))
        shutil.move(prefix + stdlib, os.path.join(OUT, "root") + stdlib)
    shutil.rmtree(prefix, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
