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
(collecting nothing, in an empty folder) under a throwaway prefix; that
bytecode is then deleted, and every file is compiled afresh by this
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


def library_modules(stdlib: str) -> list[str]:
    """The standard library sources a pytest start in the layer imports."""
    python = os.path.join(LAYER, "bin", "python")
    if not os.path.exists(python):
        return []
    with tempfile.TemporaryDirectory() as warm, tempfile.TemporaryDirectory() as empty:
        try:
            subprocess.run([os.path.abspath(python), "-X", f"pycache_prefix={warm}", "-m", "pytest", "-q",
                            "--collect-only", "-p", "no:cacheprovider"], cwd=empty, timeout=120,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return []
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
