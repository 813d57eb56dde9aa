"""Running Python as another uid, where that uid may reach none of this install.

The suite runs from clones in 0700 folders (as `mktemp -d` makes them, as
many home folders are), so an agent's uid cannot start this checkout's
interpreter or import gatetui from it. A real agent has gatetui installed in
its own environment; here the same code is loaded as root and then gives up
root for good (`gatetui.supervise.packer.become`) before it does anything, so what it
does afterwards has exactly the agent's rights.

`locked_install` goes further: the interpreter, its site-packages and gatetui
are seen through a tmpfs only root can enter, in a mount namespace of the
test's own, so a test can pin that gatetui needs nothing the agent can read.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from tests.support.paths import ROOT  # the checkout: gatetui/ and tests/

# Every module of gatetui and dulwich (and so what they import), since the CLI
# and dulwich import some only when a command needs them: after `become`,
# nothing more can load. A dulwich module needing an optional extra is passed.
LOAD_ALL = (
    "import importlib, pkgutil, dulwich, gatetui\n"
    "for _package in (gatetui, dulwich):\n"
    "    for _module in pkgutil.walk_packages(_package.__path__, _package.__name__ + '.'):\n"
    "        if not _module.name.endswith('__main__'):\n"
    "            try:\n"
    "                importlib.import_module(_module.name)\n"
    "            except ImportError:\n"
    "                pass\n"
)


def as_user_code(uid: int, code: str, imports: Sequence[str]) -> str:
    """`code`, preceded by loading gatetui, dulwich and `imports`, and becoming `uid`."""
    loads = "".join(f"import {name}\n" for name in imports)
    return f"{LOAD_ALL}{loads}from gatetui.supervise.packer import become\nbecome({uid}, {uid})\n{code}"


def run_as(
    uid: int, code: str, *, imports: Sequence[str] = (), env: Mapping[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`code` as `uid`, by an isolated interpreter that loaded `imports` as root."""
    return subprocess.run(
        [sys.executable, "-I", "-c", as_user_code(uid, code, imports)],
        capture_output=True,
        text=True,
        cwd="/",
        timeout=timeout,
        env=dict(env or os.environ),
    )


@contextlib.contextmanager
def locked_install() -> Iterator[Path]:
    """A folder (0700, root's) in which `python_in_lock` shows this install."""
    lock = Path(tempfile.mkdtemp(prefix="gatetui-locked-", dir="/var/tmp"))
    try:
        yield lock
    finally:
        lock.rmdir()  # the mounts lived in the child's namespace only: nothing is left in it


def python_in_lock(lock: Path, code: str, *, agent_uid: int, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`code` run as root by this venv's interpreter, reached only through
    `lock` (a 0700 tmpfs in a private mount namespace), with gatetui imported
    from there too; exit 9 if `agent_uid` could read the install after all."""
    venv, src = lock / "venv", lock / "src"
    first = (
        f"import sys\nsys.path.insert(0, {str(src)!r})\nimport gatetui\n"
        f"assert gatetui.__file__.startswith({str(lock)!r}), gatetui.__file__\n"
    )
    script = "\n".join(
        [
            "set -e",
            f"mount -t tmpfs -o mode=0700 gatetui-locked {lock}",
            f"mkdir {venv} {src}",
            f"mount --bind {shlex.quote(sys.prefix)} {venv}",
            f"mount --bind {shlex.quote(str(ROOT))} {src}",
            f"if setpriv --reuid={agent_uid} --regid={agent_uid} --clear-groups cat {venv}/pyvenv.cfg "
            f">/dev/null 2>&1; then echo 'the agent can read the install' >&2; exit 9; fi",
            f'exec {venv}/bin/python -I -c "$1"',
        ]
    )
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", first + code],
        capture_output=True,
        text=True,
        cwd="/",
        timeout=timeout,
    )
