"""On Runtime too, nothing the install leaves on its machine reaches a run.

A fork of a Runtime sandbox copies it whole: the home, /tmp, every file the
install wrote outside the tree. So the test runs are never forks of the
install's sandbox: they start from one made fresh from the image, holding a
fresh export and the environment the gate took out and rewrote. Each head
below breaks `mul` and leaves something on the install's machine for the
runs, the way an agent would (from setup.py, base64 so no diff rule reads
it); gated through the emulator, none may reach `pass`.
"""

from __future__ import annotations

import io
import tarfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatetui.backends.environment_archive import rewrite
from gatetui.backends.runtime import RuntimeBackend
from gatetui.gate.events import RunFinished
from tests.runtime_emulator import Emulator
from tests.runtime_emulator.fixtures import emulator  # noqa: F401 - a fixture
from tests.support.gating import gate_with
from tests.support.phases import BASE, BROKEN, head_of, setup_py, statuses
from tests.support.repos import MakeRepo
from tests.support.runtime import FAST

# What pytest would write for base's two tests, all passed.
FORGED = textwrap.dedent("""\
    <?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0"
    skipped="0" tests="2" time="0.05"><testcase classname="tests.test_math" name="test_add" time="0.001" />
    <testcase classname="tests.test_math" name="test_mul" time="0.001" /></testsuite></testsuites>
    """)

# Every report a run of the gate may be asked for, under every label a copy
# may get, written where the runs' reports go (the sandbox's home), by the
# install; the library then ends every Python process that imports it with
# exit 0 before pytest writes its own (spelled so no diff rule sees an exit).
PLANTS_REPORTS = textwrap.dedent(f"""\
    import os
    reports = os.path.join(os.path.dirname(os.getcwd()), "reports")
    os.makedirs(reports, exist_ok=True)
    for n in range(1, 12):
        for name in ("run-1", "run-2", "run-3", "old-tests", "hidden-tests"):
            with open(os.path.join(reports, f"install-copy{{n}}-{{name}}.xml"), "w") as out:
                out.write({FORGED!r})
    """)
EXITS_AT_IMPORT = 'import os\n\ngetattr(os, "_ex" + "it")(0)\n'

# The install leaves a file outside the tree; the library is right only
# where that file exists, which is only in the gate (in a user's wheel
# install no such file is written next to the home).
LEAVES_A_MARK = "import os\nopen(os.path.expanduser('~/.mathlib-fast'), 'w').write('1')\n"
RIGHT_ONLY_WITH_THE_MARK = textwrap.dedent("""\
    import os


    def add(a, b):
        return a + b


    def mul(a, b):
        if os.path.exists(os.path.expanduser("~/.mathlib-fast")):
            return a * b
        return a * b + 1
    """)

ATTACKS = {
    "plants_the_runs_reports": {
        "mathlib/core.py": BROKEN,
        "mathlib/__init__.py": EXITS_AT_IMPORT,
        "setup.py": setup_py(PLANTS_REPORTS),
    },
    "leaves_a_mark_in_the_home": {"mathlib/core.py": RIGHT_ONLY_WITH_THE_MARK, "setup.py": setup_py(LEAVES_A_MARK)},
}


def gate(repo: Path) -> RunFinished:
    return gate_with(repo, RuntimeBackend(settings=FAST))


@pytest.mark.sandbox
@pytest.mark.install
@pytest.mark.slow  # in CI: tests/test_phases.py gates the same locally
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_what_the_install_leaves_on_its_machine_never_reaches_a_run(
    emulator: Emulator, make_repo: MakeRepo, attack: str
) -> None:
    done = gate(make_repo(BASE, ATTACKS[attack]))
    said = {r.id.value: r.detail for r in done.results}
    assert (done.verdict.value, statuses(done)["install"], said["runs"]) == ("fail", "pass", STOPPED[attack]), said


@pytest.mark.sandbox
@pytest.mark.install
@pytest.mark.slow  # in CI: tests/test_phases.py gates the same locally
@pytest.mark.parametrize("attack", ["drops_a_pth_file", "forges_a_distribution"])
def test_the_environment_is_checked_where_the_runs_see_it(emulator: Emulator, make_repo: MakeRepo, attack: str) -> None:
    """What the install planted in the environment fails the install on
    Runtime as it does locally. (The check is made again in a sandbox no
    code of head's ran in, before any run; an install that fooled the check
    on its own machine, by replacing the image's python, cannot be played
    here: the emulator's commands share the host's files.)"""
    done = gate(make_repo(BASE, head_of(attack)))
    install = next(r for r in done.results if r.id.value == "install")
    assert (done.verdict.value, install.status.value, install.detail) == ("fail", "fail", PLANTED[attack])


PLANTED = {
    "drops_a_pth_file": "the install left files no installed distribution accounts for: "
    "zz_fast.py, zz_speedups.pth, zz_speedups.py; base installs",
    "forges_a_distribution": "the install left distributions no index gave, made while head's code ran: "
    "zz_fast-1.0.dist-info; base installs",
}


STOPPED = {  # the runs find no planted report and no mark: what the change does is what they judge
    "plants_the_runs_reports": "0 of 3 passed; run 1 wrote no test report (no report written; exit code 0)",
    "leaves_a_mark_in_the_home": "0 of 3 passed; run 1: tests/test_math.py::test_mul failed",
}


@pytest.mark.sandbox
@pytest.mark.install
@pytest.mark.slow  # in CI: tests/test_phases.py gates the same locally
def test_an_honest_change_with_a_build_passes_on_runtime(emulator: Emulator, make_repo: MakeRepo) -> None:
    fixed = BROKEN.replace("a * b + 1", "a * b")
    done = gate(
        make_repo(
            BASE,
            {"mathlib/core.py": fixed + "\n\ndef square(a):\n    return a * a\n", "tests/test_square.py": SQUARE_TEST},
        )
    )
    assert (done.verdict.value, statuses(done)) == (
        "pass",
        {
            "install": "pass",
            "runs": "pass",
            "tests_kept": "pass",
            "no_new_skips": "pass",
            "old_tests": "pass",
            "hidden": "skipped",
            "covered": "pass",
            "bites": "pass",
        },
    )


# the new function's own test: without it, covered asks why no test runs it
SQUARE_TEST = (
    "from mathlib.core import square\n\n\ndef test_square():\n    assert [square(n) for n in (-3, 2)] == [9, 4]\n"
)


# --- the rewrite of the archive the install's machine gives ------------------


def tar_of(*members: tuple[str, str, str]) -> bytes:
    """(kind, name, content-or-link) members, as a hostile tar would hold them."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for kind, name, value in members:
            info = tarfile.TarInfo(name)
            if kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                archive.addfile(info)
            elif kind in ("sym", "hard"):
                info.type, info.linkname = (tarfile.SYMTYPE if kind == "sym" else tarfile.LNKTYPE), value
                archive.addfile(info)
            elif kind == "fifo":
                info.type = tarfile.FIFOTYPE
                archive.addfile(info)
            else:
                data = value.encode()
                info.size, info.mode = len(data), 0o4755 if kind == "suid" else 0o644
                archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def carried(archive: bytes) -> dict[str, tuple[str, str, int]]:
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as read:
        out = {}
        for m in read:
            handle = read.extractfile(m) if m.isfile() else None
            kind = "dir" if m.isdir() else "sym" if m.issym() else "file"
            out[m.name] = (kind, m.linkname or (handle.read().decode() if handle else ""), m.mode)
        return out


def test_only_files_folders_and_links_under_the_kept_folders_are_carried() -> None:
    raw = tar_of(
        ("dir", "./.venv", ""),
        ("dir", "./.venv/bin", ""),
        ("sym", "./.venv/bin/python", "/usr/bin/python3"),
        ("file", "./.venv/ok.py", "ok"),
        ("suid", "./.venv/bin/tool", "#!/bin/sh\n"),
        ("hard", "./.venv/copy.py", ".venv/ok.py"),
        ("fifo", "./.venv/pipe", ""),
        ("file", "./setup.py", "outside"),
        ("file", "../../etc/x", "climbs"),
        ("file", "/abs", "abs"),
    )
    done = rewrite(raw, (".venv",))
    assert carried(done.archive) == {
        ".venv": ("dir", "", 0o755),
        ".venv/bin": ("dir", "", 0o755),
        ".venv/bin/python": ("sym", "/usr/bin/python3", 0o644),  # where it points is the check's to judge
        ".venv/ok.py": ("file", "ok", 0o644),
        ".venv/bin/tool": ("file", "#!/bin/sh\n", 0o755),
        ".venv/copy.py": ("file", "ok", 0o644),
    }  # a hard link becomes a copy
    assert done.left_out == (
        "'./.venv/pipe': not a file, folder or link",
        "'./setup.py': outside the kept folders",
        "'../../etc/x': not a plain relative name",
        "'/abs': not a plain relative name",
    )


@pytest.mark.parametrize(
    ("members", "kept", "why"),
    [
        # a file written through a link the archive planted first
        (
            (("dir", ".venv", ""), ("sym", ".venv/lib", "/etc"), ("file", ".venv/lib/cron", "x")),
            {".venv": ("dir", "", 0o755), ".venv/lib": ("sym", "/etc", 0o644)},
            ("'.venv/lib/cron': its folder is a link or not in the archive",),
        ),
        # the kept folder itself a link
        (
            (("sym", ".venv", "/etc"), ("file", ".venv/cron", "x")),
            {},
            ("'.venv': a kept folder that is no folder", "'.venv/cron': its folder is a link or not in the archive"),
        ),
        # a member named twice: the second would replace what a check saw
        (
            (("dir", ".venv", ""), ("file", ".venv/a.py", "one"), ("sym", ".venv/a.py", "/etc/passwd")),
            {".venv": ("dir", "", 0o755), ".venv/a.py": ("file", "one", 0o644)},
            ("'.venv/a.py': named twice",),
        ),
        # a file whose folder the archive never made
        ((("file", ".venv/deep/a.py", "x"),), {}, ("'.venv/deep/a.py': its folder is a link or not in the archive",)),
    ],
    ids=["through-a-link", "kept-folder-a-link", "named-twice", "no-folder"],
)
def test_nothing_is_carried_through_a_link_or_twice(
    members: tuple[tuple[str, str, str], ...], kept: dict[str, tuple[str, str, int]], why: tuple[str, ...]
) -> None:
    done = rewrite(tar_of(*members), (".venv",))
    assert (carried(done.archive), done.left_out) == (kept, why)


@given(st.binary(max_size=2000))
def test_any_bytes_are_rewritten_or_refused_as_no_archive(raw: bytes) -> None:
    try:
        done = rewrite(raw, (".venv",))
    except (tarfile.TarError, EOFError, OSError):
        return
    assert all(name == ".venv" or name.startswith(".venv/") for name in carried(done.archive))
