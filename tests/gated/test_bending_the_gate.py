"""Red team, gated for real: a broken `mul` and a way to bend the gate that
reached `pass` before its defence, written the way an agent would.

- package metadata committed in the tree (`zz_fast-1.0.dist-info`): pytest
  would load its pytest11 entry point from `sys.path` in every run, base's
  tests included, and the plugin turns failures into passes (the runs load
  only the verified distributions' plugins now, so the runs fail too);
- a forgery in a library module named like a test (`mathlib/test_speedups.py`),
  which the diff rules leave alone as a test file, imported by the package;
- a test helper loosened in a test folder not named `tests` (`checks/`),
  which base's tests import by bare name from beside them.

Each is gated by the local backend and may not reach `pass`; an honest change
that looks like them (a helper extended, a new test, library code that reads
one variable and compiles a pattern) still passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gatetui.backends.isolation import probe_isolation
from gatetui.gate.checks import Verdict
from tests.support.local import fork_mode_or_skip
from tests.support.phases import BASE, BROKEN, FORCER, gate, statuses
from tests.support.repos import MakeRepo

pytestmark = [
    pytest.mark.skipif(
        not probe_isolation().full,
        reason=f"the local backend cannot isolate runs here ({probe_isolation().reason}); CI runs as root",
    ),
    pytest.mark.sandbox,
    pytest.mark.install,
]

# pytest's reports patched when the package is imported under the runner, quietly elsewhere.
PATCH = """\
try:
    import _pytest.reports as _reports
except ImportError:
    _reports = None
if _reports is not None:
    _make = _reports.TestReport.from_item_and_call

    def _passed(item, call):
        report = _make(item, call)
        if report.when == "call" and report.failed:
            report.outcome, report.longrepr = "passed", None
        return report

    _reports.TestReport.from_item_and_call = staticmethod(_passed)
"""
CHECKS_BASE = {
    **{k: v for k, v in BASE.items() if not k.startswith("tests/")},
    "pyproject.toml": BASE["pyproject.toml"].replace('testpaths = ["tests"]', 'testpaths = ["checks"]'),
    "checks/helpers.py": "from mathlib.core import mul\n\n\ndef check_mul(a, b, want):\n    assert mul(a, b) == want\n",
    "checks/test_math.py": (
        "from helpers import check_mul\nfrom mathlib.core import add\n\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    check_mul(3, 4, 12)\n"
    ),
}
ATTACKS = {
    "metadata_in_the_tree": (
        BASE,
        {
            "mathlib/core.py": BROKEN,
            "zz_fast.py": FORCER,
            "zz_fast-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: zz-fast\nVersion: 1.0\n",
            "zz_fast-1.0.dist-info/entry_points.txt": "[pytest11]\nzz_fast = zz_fast\n",
        },
    ),
    "library_module_named_like_a_test": (
        BASE,
        {
            "mathlib/core.py": BROKEN,
            "mathlib/test_speedups.py": PATCH,
            "mathlib/__init__.py": "from . import test_speedups as _speedups  # noqa: F401\n",
        },
    ),
    "helper_loosened_beside_the_tests": (
        CHECKS_BASE,
        {
            "mathlib/core.py": BROKEN,
            "checks/helpers.py": "from mathlib.core import mul\n\n\ndef check_mul(a, b, want):\n    assert abs(mul(a, b) - want) <= 1\n",
        },
    ),
}


# Two attacks in `make test`; metadata_in_the_tree in CI (`make test-slow`),
# its plugin refused in `make test` by tests/stacks/python/test_plugins_by_name.py.
ATTACKS_HERE = {"library_module_named_like_a_test", "helper_loosened_beside_the_tests"}


@pytest.mark.parametrize(
    "attack", [pytest.param(a, marks=() if a in ATTACKS_HERE else pytest.mark.slow) for a in sorted(ATTACKS)]
)
def test_a_broken_change_that_bends_the_gate_does_not_pass(make_repo: MakeRepo, tmp_path: Path, attack: str) -> None:
    base, head = ATTACKS[attack]
    done = gate(make_repo(base, head), tmp_path / "work", fork_mode_or_skip("overlay"))
    assert done.verdict is Verdict.FAIL
    # the runs load no plugin from the tree's metadata (tests/stacks/python/test_plugins_by_name.py): the failure shows there too
    runs = "fail" if attack == "metadata_in_the_tree" else "pass"
    assert (statuses(done)["install"], statuses(done)["runs"], statuses(done)["old_tests"]) == ("pass", runs, "fail")


def test_an_honest_change_that_looks_like_them_passes(make_repo: MakeRepo, tmp_path: Path) -> None:
    core = CHECKS_BASE["mathlib/core.py"] + (
        '\n\nimport os\nimport re\n\nNUMBER = re.compile(r"-?\\d+")\n\n\n'
        'def parse(text):\n    """Numbers in text; the base from MATHLIB_BASE."""\n'
        '    base = int(os.environ.get("MATHLIB_BASE", "10"))\n'
        "    return [int(n, base) for n in NUMBER.findall(text)]\n"
    )
    head = {
        "mathlib/core.py": core,
        "checks/helpers.py": CHECKS_BASE["checks/helpers.py"] + "\n\ndef check_parse(text, want):\n"
        "    from mathlib.core import parse\n    assert parse(text) == want\n",
        "checks/test_parse.py": "from helpers import check_parse\n\n\ndef test_parse():\n    check_parse('a 12 b -3', [12, -3])\n"
        "\n\ndef test_parse_in_base_16(monkeypatch):\n"
        "    monkeypatch.setenv('MATHLIB_BASE', '16')\n    check_parse('a 10', [16])\n",
    }
    done = gate(make_repo(CHECKS_BASE, head), tmp_path / "work", fork_mode_or_skip("overlay"))
    assert statuses(done) == {
        "install": "pass",
        "runs": "pass",
        "tests_kept": "pass",
        "no_new_skips": "pass",
        "old_tests": "pass",
        "hidden": "skipped",
        "covered": "pass",
        "bites": "pass",
    }
