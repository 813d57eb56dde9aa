"""A run's pid 1 (backends/pid1.py) as the wrapper starts it, for real:
the command gets exactly the environment it was given, whatever the
interpreter's start adds to its own; a step that cannot be done ends it in
one line before the command starts."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from gatetui.backends.confine import View, Where, wrap
from gatetui.backends.isolation import probe_isolation
from gatetui.backends.uids import UID_COUNT, UID_FIRST

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(
        not probe_isolation().full,
        reason=f"the local backend cannot isolate runs here ({probe_isolation().reason}); CI runs as root",
    ),
]


@pytest.fixture
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="gatetui-pid1-") as folder:  # beside the probe's, not under a 0700 one
        root = Path(folder)
        for sub in ("ws", "home", "reports", "mnt"):
            (root / sub).mkdir()
        root.chmod(0o755)
        yield root


def confined(
    scratch: Path, command: str, env: dict[str, str], tree: Path | None = None
) -> subprocess.CompletedProcess[str]:
    view = View(tree or scratch / "ws", scratch / "home", scratch / "reports", Where.draw())
    argv = wrap(command, scratch, view, uid=UID_FIRST + UID_COUNT - 1, network=False)
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("locale", ["C", "POSIX", "C.UTF-8"])
def test_the_command_gets_exactly_the_environment_it_was_given(scratch: Path, locale: str) -> None:
    """Where the locale is C, the interpreter's start sets LC_CTYPE for
    itself: a variable no run on an ordinary machine has."""
    given = {"PATH": "/usr/bin:/bin", "LANG": locale, "HOME": "/home/x", "PWD": "/somewhere", "OLDPWD": "/before"}
    done = confined(scratch, "env -0", given)
    assert done.returncode == 0, done.stderr
    seen = dict(item.split("=", 1) for item in done.stdout.split("\0") if item)
    tree = seen.pop("PWD")
    assert seen == {"PATH": "/usr/bin:/bin", "LANG": locale, "HOME": "/home/x"}
    assert tree.startswith("/tmp/")  # where the tree is shown: the shell's working folder, as a cd says


def test_a_step_that_cannot_be_done_is_one_line_and_the_command_never_runs(scratch: Path) -> None:
    done = confined(scratch, "echo ran", {"PATH": "/usr/bin:/bin"}, tree=scratch / "nowhere")
    assert (done.returncode, done.stdout) == (125, "")
    nowhere = scratch / "nowhere"
    assert done.stderr.startswith(f"the run's sandbox could not be set up: [Errno 2] mount {nowhere} on {scratch}/mnt/")
    assert done.stderr.endswith(": No such file or directory\n") and done.stderr.count("\n") == 1
