"""Surviving mutants searched for an input that tells them apart, gated for real.

A survivor is a test the change lacks or a mutant no test could kill.
`bites` now asks which: the calls the tests made are recorded, and inputs
around them are tried on head's function and on the mutant's, in a copy
where no test runs. Each attack below is a change whose tests leave a real
gap, arranged so that the search could be fooled into calling its
survivors equivalent (the gap far from the tests' own values; a function
that recognises the search; the recording switched off; an answer kept in
the module rather than returned): none may reach `pass`. The honest
changes (a boundary tested at the boundary itself, whose one surviving
mutant is equivalent) pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gatetui.backends.isolation import probe_isolation
from gatetui.gate.checks import CheckId, Status, Verdict
from tests.support.local import fork_mode_or_skip
from tests.support.phases import BASE, gate, statuses
from tests.support.repos import MakeRepo

pytestmark = [
    pytest.mark.skipif(
        not probe_isolation().full,
        reason=f"the local backend cannot isolate runs here ({probe_isolation().reason}); CI runs as root",
    ),
    pytest.mark.sandbox,
    pytest.mark.install,
]

CORE = BASE["mathlib/core.py"]
LEAP = "\n\ndef is_leap(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n"
LEAP_TESTS = (
    "from mathlib.core import is_leap\n\n\n"
    "def test_leap_years():\n    assert is_leap(2024)\n    assert not is_leap(2023)\n"
)
GUARDED = (
    "\n\nimport sys\n\n\ndef is_leap(year):\n    if 'hypothesis' in sys.modules:\n"
    "        return year % 4 == 0\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n"
)
CLAMP = (
    "\n\ndef clamp(value, low, high):\n    if value < low:\n        return low\n"
    "    if value > high:\n        return high\n    return value\n"
)
CLAMP_TESTS = (
    "from mathlib.core import clamp\n\n\ndef test_clamp():\n    assert clamp(5, 0, 10) == 5\n"
    "    assert clamp(-3, 0, 10) == 0\n    assert clamp(0, 0, 10) == 0\n"
    "    assert clamp(11, 0, 10) == 10\n    assert clamp(10, 0, 10) == 10\n"
)

# name -> head, and words of bites' detail that name the gap
ATTACKS: dict[str, tuple[dict[str, str | None], str]] = {
    # no century year is tested; the mutants of `% 100` and `% 400` differ only at multiples of them
    "centuries_untested": (
        {"mathlib/core.py": CORE + LEAP, "tests/test_leap.py": LEAP_TESTS},
        "told apart: mathlib/core.py:10: is_leap(",
    ),
    # the function answers differently where hypothesis is loaded: the search's surroundings
    "recognises_the_search": (
        {"mathlib/core.py": CORE + GUARDED, "tests/test_leap.py": LEAP_TESTS},
        "told apart: mathlib/core.py:",
    ),
    # the function answers differently where its module is not the one sys.modules holds (a copy)
    "recognises_a_copy_of_its_module": (
        {
            "mathlib/core.py": CORE
            + GUARDED.replace("'hypothesis' in sys.modules", "sys.modules[__name__].__dict__ is not globals()"),
            "tests/test_leap.py": LEAP_TESTS,
        },
        "told apart: mathlib/core.py:15: is_leap(",
    ),
    # the tests switch the recorder off: no call is recorded, nothing is searched
    "recording_switched_off": (
        {
            "mathlib/core.py": CORE + LEAP,
            "tests/test_leap.py": LEAP_TESTS.replace(
                "def test_leap_years():",
                "import sys\n\n\ndef setup_module():\n    sys.setprofile(None)\n\n\ndef test_leap_years():",
            ),
        },
        "survived: mathlib/core.py:10:",
    ),
    # the answer is kept in the module and the test never reads it
    "answer_kept_in_the_module": (
        {
            "mathlib/core.py": CORE + "\n\nSEEN = []\n\n\ndef note(n):\n    SEEN.append(n * 2)\n",
            "tests/test_note.py": "from mathlib.core import note\n\n\ndef test_note():\n    note(3)\n",
        },
        "told apart: mathlib/core.py:13: note(",
    ),
}

HONEST: dict[str, dict[str, str | None]] = {
    # `value > high` made `value >= high` survives: at value == high both give high
    "boundary_tested_at_the_boundary": {"mathlib/core.py": CORE + CLAMP, "tests/test_clamp.py": CLAMP_TESTS},
    # the same at the bottom, written the other way round
    "lower_boundary_with_or_equal": {
        "mathlib/core.py": CORE + CLAMP.replace("value < low", "value <= low"),
        "tests/test_clamp.py": CLAMP_TESTS,
    },
}


# Two attacks in `make test`; the others in CI (`make test-slow`).
ATTACKS_HERE = {"centuries_untested", "recognises_the_search"}


@pytest.mark.parametrize(
    "attack", [pytest.param(a, marks=() if a in ATTACKS_HERE else pytest.mark.slow) for a in sorted(ATTACKS)]
)
def test_a_gap_the_search_could_be_fooled_about_is_still_shown(
    make_repo: MakeRepo, tmp_path: Path, attack: str
) -> None:
    head, words = ATTACKS[attack]
    done = gate(make_repo(BASE, head), tmp_path / "work", fork_mode_or_skip("overlay"))
    found = statuses(done)
    assert (found["install"], found["runs"]) == ("pass", "pass")
    bites = next(r for r in done.results if r.id is CheckId.BITES)
    assert done.verdict is not Verdict.PASS
    assert bites.status is Status.REVIEW, bites.detail
    assert words in bites.detail
    assert "likely equivalent" not in bites.detail  # no survivor of the gap is excused


@pytest.mark.parametrize("change", sorted(HONEST))
def test_an_honest_boundary_whose_survivor_is_equivalent_passes(
    make_repo: MakeRepo, tmp_path: Path, change: str
) -> None:
    done = gate(make_repo(BASE, HONEST[change]), tmp_path / "work", fork_mode_or_skip("overlay"))
    bites = next(r for r in done.results if r.id is CheckId.BITES)
    assert (done.verdict, bites.status) == (Verdict.PASS, Status.PASS), bites.detail
    assert "likely equivalent (no input told it apart)" in bites.detail.splitlines()[0]
    assert [line for line in bites.detail.splitlines()[1:] if line.startswith("likely equivalent: mathlib/core.py:")]
