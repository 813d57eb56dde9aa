"""Tests that fail only in a mutant's run, gated for real.

A mutant's run cannot be made the same as head's own runs in every way: it
loads the mutant (a plugin of the gate's, a patched source loader), stops
at the first failure and runs only the tests that reached the line. A test
that notices and fails there kills every mutant without checking anything,
and a real bug beside it passes `bites`. So every kill `bites` counts is
checked by a control: one run set up exactly as a mutant's, with head's own
code as its "mutant", over the tests that killed: a test that fails there
too killed nothing. The control's "mutant" is head's code in a twin's text
(stacks/python/twins.py), so a test that tells a mutant from head's code by
reading it (the bytes the gate's loader holds, the gate's plugin file, the
function's bytecode, each against a fingerprint of head's) fails there too.
Each head below adds `clamp` with an off-by-one bug and a test that checks
it only where the bug does not show, plus one way of telling a mutant's run
apart.
"""

from __future__ import annotations

import hashlib
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

CORE = BASE["mathlib/core.py"] + "\n\ndef clamp(x, lo, hi):\n    return max(lo, min(x, hi + 1))\n"  # off by one
# how the test tells a mutant's run apart
TELLS = {
    "stop_at_first_failure_in_the_environment": (
        "import os",
        "",
        'not "-x" in os.environ.get("PYTEST_ADDOPTS", "").split()',
    ),
    "stop_at_first_failure_in_the_config": ("", "request", 'request.config.getoption("maxfail") != 1'),
}
# what head's own runs show too: such a test fails them (`runs`), and never reaches bites' question
EVERYWHERE = {
    "a_gate_module_it_does_not_know": ("import sys", "", 'not any(n.startswith("site_") for n in sys.modules)'),
    "the_source_loader_patched": (
        "import importlib.machinery",
        "",
        'importlib.machinery.SourceFileLoader.get_code.__module__ == "importlib._bootstrap_external"',
    ),
}


# how the test tells a mutant's run apart by reading the mutant the gate holds: each compares what it
# finds with a fingerprint of head's own text, which head's author knows
HEAD_PRINT = hashlib.sha256(CORE.encode()).hexdigest()
CLAMP_CODE = next(c for c in compile(CORE, "core.py", "exec").co_consts if getattr(c, "co_name", "") == "clamp")
CODE_PRINT = hashlib.sha256(CLAMP_CODE.co_code + repr(CLAMP_CODE.co_consts).encode()).hexdigest()
HELD = {
    "the_loaders_closure": (
        "import hashlib, importlib.machinery",
        "",
        "all(hashlib.sha256(c.cell_contents).hexdigest() == PRINT"
        " for c in importlib.machinery.SourceFileLoader.get_code.__closure__ or ()"
        " if isinstance(c.cell_contents, bytes) and b'def clamp' in c.cell_contents)",
    ),
    "the_functions_bytecode": (  # named so that no rule that reads names finds it
        "import hashlib",
        "",
        'hashlib.sha256(getattr(getattr(clamp, "__co" "de__"), "co_" "code")'
        ' + repr(getattr(clamp, "__co" "de__").co_consts).encode()).hexdigest() == CODE',
    ),
    "the_plugin_file": (
        "import ast, base64, hashlib, sys, zlib",
        "",
        "all(hashlib.sha256(zlib.decompress(base64.b85decode(ast.literal_eval(line.split(', ')[1][:-1])))).hexdigest()"
        " == PRINT for m in list(sys.modules.values()) if (getattr(m, '__file__', '') or '').split('/')[-1]"
        " .startswith('site_') for line in open(m.__file__).read().splitlines() if line.startswith('_install('))",
    ),
}


def head(imports: str, fixture: str, ordinary: str) -> dict[str, str | None]:
    test = (
        f"{imports}\n\nfrom mathlib.core import clamp\n\nPRINT = {HEAD_PRINT!r}\nCODE = {CODE_PRINT!r}\n\n\ndef test_clamp({fixture}):\n"
        f"    assert {ordinary}  # fails in a mutant's run only\n    assert clamp(5, 0, 10) == 5\n"
    )
    return {"mathlib/core.py": CORE, "tests/test_clamp.py": test}


# the further ways of reading what the gate holds wait for CI (`make test-slow`)
HELD_IN_CI = {"the_plugin_file", "the_functions_bytecode"}


@pytest.mark.parametrize(
    "tell", [pytest.param(t, marks=pytest.mark.slow if t in HELD_IN_CI else ()) for t in sorted({**TELLS, **HELD})]
)
def test_a_test_that_fails_only_in_a_mutants_run_kills_nothing(make_repo: MakeRepo, tmp_path: Path, tell: str) -> None:
    done = gate(make_repo(BASE, head(*{**TELLS, **HELD}[tell])), tmp_path / "work", fork_mode_or_skip("overlay"))
    found = statuses(done)
    assert (found["install"], found["runs"], found["covered"]) == ("pass", "pass", "pass")
    bites = next(r for r in done.results if r.id is CheckId.BITES)
    assert (done.verdict, bites.status) == (Verdict.REVIEW, Status.REVIEW), bites.detail
    assert "fail without the mutant too" in bites.detail.splitlines()[0]


@pytest.mark.parametrize("tell", sorted(EVERYWHERE))
def test_a_sign_head_runs_show_too_fails_the_runs(make_repo: MakeRepo, tmp_path: Path, tell: str) -> None:
    done = gate(make_repo(BASE, head(*EVERYWHERE[tell])), tmp_path / "work", fork_mode_or_skip("overlay"))
    assert (done.verdict, statuses(done)["runs"]) == (Verdict.FAIL, "fail")


def test_an_honest_test_keeps_its_kills(make_repo: MakeRepo, tmp_path: Path) -> None:
    test = (
        "from mathlib.core import clamp\n\n\ndef test_clamp():\n    assert clamp(5, 0, 10) == 5\n"
        "    assert clamp(-1, 0, 10) == 0\n    assert clamp(10, 0, 10) == 10\n    assert clamp(11, 0, 10) == 10\n"
    )
    fixed = CORE.replace("hi + 1", "hi")
    done = gate(
        make_repo(BASE, {"mathlib/core.py": fixed, "tests/test_clamp.py": test}),
        tmp_path / "work",
        fork_mode_or_skip("overlay"),
    )
    bites = next(r for r in done.results if r.id is CheckId.BITES)
    assert (done.verdict, bites.status) == (Verdict.PASS, Status.PASS), bites.detail
