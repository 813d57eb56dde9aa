"""Tests that read the code instead of calling it, gated for real.

`bites` asks whether the tests would notice a small bug in the changed
lines: each mutant is run under the tests that reached its line. A test can
make every mutant "die" without checking any behaviour, by pinning what the
code looks like: the module file's sha256 or size, `inspect.getsource`'s
text, the lines `linecache` holds, the function's bytecode. Any mutant
differs, so it fails, and the real bug beside it goes unnoticed.

Each head below adds `is_leap` with a real bug (the 400 rule forgotten:
2000 is called common) and a test that calls it only where the bug does not
show, plus one way of pinning the code. Without the pin some mutants survive
and `bites` asks a person; with it, before the defence, every mutant died
and the gate said `pass`. Now the mutant is compiled in memory under the
module's own file name, so what a test reads from the file (its bytes, its
size, getsource, linecache) is head's text and the pin holds in every
mutant run (the survivors are named); the diff rule names the test lines
that read library source or bytecode (`old_tests` fails: review); and a pin
of the bytecode itself, which every mutant fails, fails the control's twin
of head's code too (stacks/python/twins.py), so its kills count for nothing.
"""

from __future__ import annotations

import asyncio
import dis
import hashlib
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gatetui.backends.isolation import probe_isolation
from gatetui.backends.local import LocalBackend
from gatetui.gate.checks import CheckId, Status, Verdict
from gatetui.gate.events import RunFinished
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from tests.support.gating import shared_layers
from tests.support.local import fork_mode_or_skip
from tests.support.phases import BASE, details, gate, statuses
from tests.support.repos import MakeRepo

pytestmark = [
    pytest.mark.skipif(
        not probe_isolation().full,
        reason=f"the local backend cannot isolate runs here ({probe_isolation().reason}); CI runs as root",
    ),
    pytest.mark.sandbox,
    pytest.mark.install,
]

FUNCTION = textwrap.dedent('''\
    def is_leap(year):
        """Whether `year` has a 29 February."""
        return year % 4 == 0 and year % 100 != 0
    ''')
CORE = BASE["mathlib/core.py"] + "\n\n" + FUNCTION
SHA = hashlib.sha256(CORE.encode()).hexdigest()


def _compiled() -> Any:
    """is_leap as this interpreter (the runs') compiles head's text."""
    scope: dict[str, Any] = {}
    exec(compile(CORE, "core.py", "exec"), scope)  # noqa: S102 - head's text, to pin what a test would pin
    return scope["is_leap"]


def _code() -> tuple[str, tuple[object, ...]]:
    code = _compiled().__code__
    return code.co_code.hex(), code.co_consts


def _instructions() -> list[tuple[str, object]]:
    return [(i.opname, i.argval) for i in dis.get_instructions(_compiled())]


# how each test pins the code: (imports, the assertion)
PINS = {
    "file_hash": (
        "import hashlib\nimport mathlib.core",
        f'assert hashlib.sha256(open(mathlib.core.__file__, "rb").read()).hexdigest() == "{SHA}"',
    ),
    # its size, and no later than this test file (exported after it, in the tree's order)
    "file_stat": (
        "import os\nimport mathlib.core",
        f"assert (os.stat(mathlib.core.__file__).st_size, os.stat(mathlib.core.__file__).st_mtime_ns "
        f"<= os.stat(__file__).st_mtime_ns) == ({len(CORE.encode())}, True)",
    ),
    "getsource": ("import inspect", f"assert inspect.getsource(is_leap) == {FUNCTION!r}"),
    "linecache": (
        "import linecache\nimport mathlib.core",
        f'assert "".join(linecache.getlines(mathlib.core.__file__)) == {CORE!r}',
    ),
    "resources": (
        "import hashlib\nfrom importlib.resources import files",
        f'assert hashlib.sha256(files("mathlib").joinpath("core.py").read_bytes()).hexdigest() == "{SHA}"',
    ),
    "pathlib": (
        "import hashlib\nfrom pathlib import Path",
        f'assert hashlib.sha256(Path("mathlib/core.py").read_bytes()).hexdigest() == "{SHA}"',
    ),
    # not a pin: the file loaded a second time and compared, which a mutant only in the import system's
    # hands would fail (the loader itself compiles the mutant, so both copies are the mutant)
    "second_copy": (
        "import importlib.util\nimport mathlib.core",
        'spec = importlib.util.spec_from_file_location("fresh_core", mathlib.core.__file__)\n'
        "fresh = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(fresh)\n"
        "assert [fresh.is_leap(y) for y in range(1800, 2101)] == [is_leap(y) for y in range(1800, 2101)]",
    ),
    "co_code": ("", f"assert (is_leap.__code__.co_code.hex(), is_leap.__code__.co_consts) == {_code()!r}"),
    "dis": (
        "import dis",
        f"assert [(i.opname, i.argval) for i in dis.get_instructions(is_leap)] == {_instructions()!r}",
    ),
}
# what a test can read of the file: the mutant is not there, so the pin holds and the survivors show
READS_THE_FILE = {"file_hash", "file_stat", "getsource", "linecache", "resources", "pathlib", "second_copy"}


def head(pin: str) -> dict[str, str]:
    imports, assertion = PINS[pin]
    test = (
        f"{imports}\n\nfrom mathlib.core import is_leap\n\n\n"
        f"def test_leap_years():\n    assert is_leap(2024)\n    assert not is_leap(2023)\n"
        + textwrap.indent(assertion, "    ")
        + "\n"
    )
    return {"mathlib/core.py": CORE, "tests/test_leap.py": test.lstrip("\n")}


# Two pins in `make test` (the file's bytes, and the bytecode the diff rule alone stands against);
# every other pin in CI (`make test-slow`).
PINS_HERE = {"file_hash", "co_code"}


@pytest.mark.parametrize(
    "pin", [pytest.param(p, marks=() if p in PINS_HERE else pytest.mark.slow) for p in sorted(PINS)]
)
def test_a_test_that_pins_the_code_kills_no_mutant_it_does_not_check(
    make_repo: MakeRepo, tmp_path: Path, pin: str
) -> None:
    done = gate(make_repo(BASE, head(pin)), tmp_path / "work", fork_mode_or_skip("overlay"))
    found = statuses(done)
    assert (found["install"], found["runs"], found["covered"]) == ("pass", "pass", "pass")
    assert done.verdict is Verdict.REVIEW
    # the diff rule names the test line that reads the code
    assert found["old_tests"] == "fail"
    assert "tests/test_leap.py:" in details(done)[CheckId.OLD_TESTS]
    assert "test code reads library source or bytecode" in details(done)[CheckId.OLD_TESTS]
    bites = next(r for r in done.results if r.id is CheckId.BITES)
    if pin in READS_THE_FILE:  # the pin held in every mutant run: what the behaviour left alive survived
        assert (bites.status, bites.detail.splitlines()[0]) == (Status.REVIEW, SURVIVORS)
    else:  # the bytecode is the mutant's own, and the control's twin's: every kill void
        assert (bites.status, bites.detail.splitlines()[0]) == (Status.REVIEW, VOID)


SURVIVORS = (
    "6 of 8 mutants killed, 2 survived: mathlib/core.py:11: return year % 4 == 0 and year % 100 != 0  ->  "
    "return year % 4 == 0 and year % 101 != 0; mathlib/core.py:11: return year % 4 == 0 and year % 100 != 0"
    "  ->  return year % 4 == 0 and year % 100 != 1"
)

VOID = "0 of 8 mutants killed, 8 killed only by tests that fail without the mutant too, in a run set up as a mutant's"


def test_without_a_pin_the_same_tests_leave_survivors(make_repo: MakeRepo, tmp_path: Path) -> None:
    """What the pins hid: the tests check 2024 and 2023 only, and nothing
    pins the code, so two mutants live (100 made 101, != 0 made != 1)."""
    test = (
        "from mathlib.core import is_leap\n\n\ndef test_leap_years():\n    assert is_leap(2024)\n"
        "    assert not is_leap(2023)\n"
    )
    done = gate(
        make_repo(BASE, {"mathlib/core.py": CORE, "tests/test_leap.py": test}),
        tmp_path / "work",
        fork_mode_or_skip("overlay"),
    )
    assert (done.verdict, statuses(done)["old_tests"]) == (Verdict.REVIEW, "pass")
    assert details(done)[CheckId.BITES].splitlines()[0] == SURVIVORS


def test_a_mutant_written_over_the_tree_is_what_the_pin_saw(make_repo: MakeRepo, tmp_path: Path) -> None:
    """The same head with the mutants written into the tree (a stack that
    declares no `mutant_import`): the file's hash differs in every mutant
    run and every mutant dies, but the control's twin is written there too
    and its hash differs as well: every kill is void."""
    plan = make_plan(GateRequest(make_repo(BASE, head("file_hash")), "main", "agent/x"))
    plan = replace(plan, profile=replace(plan.profile, lines=replace(plan.profile.lines, mutant_import=None)))
    backend = LocalBackend(work_root=tmp_path / "work", fork_mode=fork_mode_or_skip("overlay"), layers=shared_layers())

    async def go() -> RunFinished:
        events = [event async for event in run_gate(plan, backend)]
        assert isinstance(events[-1], RunFinished)
        return events[-1]

    done = asyncio.run(go())
    assert (done.verdict, statuses(done)["old_tests"]) == (Verdict.REVIEW, "fail")
    assert details(done)[CheckId.BITES].splitlines()[0] == VOID
