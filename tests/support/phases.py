"""A project whose `mul` is broken, and the attacks its install can make on the
gate's phases, as the tests that gate them for real write them: the files,
the heads, one gate in a fork mode and its statuses."""

from __future__ import annotations

import base64
import textwrap
from pathlib import Path

import pytest

from gatetui.backends.local import probe_fork_mode
from gatetui.gate.checks import CheckId
from gatetui.gate.events import RunFinished
from tests.support.gating import gate_locally

BASE = {
    "pyproject.toml": textwrap.dedent("""\
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "mathlib"
        version = "0.1.0"

        [project.optional-dependencies]
        test = ["pytest"]

        [tool.setuptools]
        packages = ["mathlib"]

        [tool.pytest.ini_options]
        testpaths = ["tests"]
        """),
    "setup.py": "from setuptools import setup\n\nsetup()\n",
    "mathlib/__init__.py": "",
    "mathlib/core.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
    "tests/test_math.py": textwrap.dedent("""\
        from mathlib.core import add, mul


        def test_add():
            assert add(2, 3) == 5


        def test_mul():
            assert mul(3, 4) == 12
        """),
}

# The same project as its builds by the gate's tools see it: [build-system]
# names a setuptools new enough to install it editable from pyproject.toml
# alone (PEP 660). The build tools layer and the wheel check gate it.
BUILT = {**BASE, "pyproject.toml": BASE["pyproject.toml"].replace('"setuptools>=61"', '"setuptools>=64"')}

BROKEN = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b + 1\n"


# Turns every failed test into a passed one: a pytest hook wrapper, spelled so
# that no diff rule sees a pytest hook.
FORCER = textwrap.dedent("""\
    import pytest


    def _report(item, call):
        outcome = yield
        report = outcome.get_result()
        if report.failed:
            report.outcome = "passed"


    globals()["py" + "test_runtest_makereport"] = pytest.hookimpl(hookwrapper=True)(_report)
    """)


# Loaded in every Python process the install's environment starts.
ADD_PLUGIN = 'import os\nos.environ["PYTEST_ADDOPTS"] = os.environ.get("PYTEST_ADDOPTS", "") + " -p zz_fast"\n'

SITE_PACKAGES = 'import glob, os\nSP = glob.glob(".venv/lib/python3*/site-packages")[0]\n'


# A whole distribution of its own, RECORD and all, registering a pytest plugin.
FORGE = SITE_PACKAGES + textwrap.dedent("""\
    import base64, hashlib
    INFO = "zz_fast-1.0.dist-info"
    files = {"zz_fast.py": FORCER, INFO + "/METADATA": "Metadata-Version: 2.1\\nName: zz-fast\\nVersion: 1.0\\n",
             INFO + "/entry_points.txt": "[pytest11]\\nzz_fast = zz_fast\\n", INFO + "/INSTALLER": "pip\\n"}
    rows = []
    for rel, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(SP, rel)), exist_ok=True)
        open(os.path.join(SP, rel), "w").write(text)
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).decode().rstrip("=")
        rows.append(rel + ",sha256=" + digest + "," + str(len(text)))
    open(os.path.join(SP, INFO, "RECORD"), "w").write("\\n".join(rows + [INFO + "/RECORD,,"]) + "\\n")
    """).replace("FORCER", repr(FORCER))


# Left running by setup.py: waits for pytest's RECORD, then adds a .pth and
# its module to it, with the right hashes.
WAITER = (
    textwrap.dedent("""\
    import base64, glob, hashlib, os, sys, time
    SP = sys.argv[1]
    records = []
    for _ in range(1200):
        records = glob.glob(os.path.join(SP, "pytest-*.dist-info", "RECORD"))
        if records:
            break
        time.sleep(0.05)
    time.sleep(0.5)
    files = {"zz_fast.py": FORCER, "zz_speedups.py": ADD_PLUGIN, "zz_speedups.pth": "import zz_speedups\\n"}
    with open(records[0], "a") as record:
        for rel, text in files.items():
            open(os.path.join(SP, rel), "w").write(text)
            digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).decode().rstrip("=")
            record.write(rel + ",sha256=" + digest + "," + str(len(text)) + "\\n")
    """)
    .replace("FORCER", repr(FORCER))
    .replace("ADD_PLUGIN", repr(ADD_PLUGIN))
)

EXTEND = SITE_PACKAGES + textwrap.dedent("""\
    import subprocess, sys
    if not os.environ.get("ZZ_STARTED"):
        os.environ["ZZ_STARTED"] = "1"
        subprocess.Popen([sys.executable, "-c", WAITER, os.path.abspath(SP)], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    """).replace("WAITER", repr(WAITER))

PAYLOADS = {
    # a sealed test that git says is unchanged, rewritten on disk
    "rewrites_a_sealed_test": (
        'import pathlib\np = pathlib.Path("tests/test_math.py")\n'
        'p.write_text(p.read_text().replace("== 12", "== 13"))\n'
    ),
    # a conftest.py that is in no git tree
    "writes_a_conftest": f'import pathlib\npathlib.Path("tests/conftest.py").write_text({FORCER!r})\n',
    # bytecode of a correct mul, never checked against the source
    "plants_bytecode": textwrap.dedent("""\
        import os, py_compile, sys, tempfile
        good = os.path.join(tempfile.mkdtemp(), "core.py")
        open(good, "w").write("def add(a, b):\\n    return a + b\\n\\n\\ndef mul(a, b):\\n    return a * b\\n")
        os.makedirs("mathlib/__pycache__", exist_ok=True)
        py_compile.compile(good, cfile="mathlib/__pycache__/core." + sys.implementation.cache_tag + ".pyc",
                           dfile="mathlib/core.py", invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        """),
    # a .pth file in the environment, loading a plugin in every run
    "drops_a_pth_file": SITE_PACKAGES
    + (
        f'open(os.path.join(SP, "zz_fast.py"), "w").write({FORCER!r})\n'
        f'open(os.path.join(SP, "zz_speedups.py"), "w").write({ADD_PLUGIN!r})\n'
        'open(os.path.join(SP, "zz_speedups.pth"), "w").write("import zz_speedups\\n")\n'
    ),
    # sitecustomize in the environment, doing the same
    "drops_a_sitecustomize": SITE_PACKAGES
    + (
        f'open(os.path.join(SP, "zz_fast.py"), "w").write({FORCER!r})\n'
        f'open(os.path.join(SP, "sitecustomize.py"), "w").write({ADD_PLUGIN!r})\n'
    ),
    "forges_a_distribution": FORGE,
    "extends_a_real_record": EXTEND,
}


# A top-level pytest.py: `python -m pytest` from the tree's root runs it, and
# it runs the real pytest with a plugin of its own.
SHADOW = textwrap.dedent("""\
    \"\"\"Test entry point.\"\"\"
    import os
    import sys

    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]
    sys.modules.pop("py" + "test", None)
    _real = __import__("py" + "test")


    def _report(item, call):
        outcome = yield
        report = outcome.get_result()
        if report.failed:
            report.outcome = "passed"


    _Quiet = type("_Quiet", (), {"py" + "test_runtest_makereport": staticmethod(_real.hookimpl(hookwrapper=True)(_report))})

    if __name__ == "__main__":
        sys.exit(_real.main(sys.argv[1:], plugins=[_Quiet()]))
    """)


def setup_py(payload: str) -> str:
    hidden = base64.b64encode(payload.encode()).decode()
    return f"import base64\nfrom setuptools import setup\n\nexec(base64.b64decode({hidden!r}))\nsetup()\n"


# Library code that, on import in any run, puts a plugin into the environment
# for every later Python process: runs 1-3, base's tests and the hidden tests
# start side by side, and one retry of a slow start is all it would take.
AT_IMPORT = SITE_PACKAGES.replace('glob.glob(".venv', 'glob.glob(os.path.dirname(__file__) + "/../.venv') + (
    "try:\n"
    f'    open(os.path.join(SP, "zz_fast.py"), "w").write({FORCER!r})\n'
    f'    open(os.path.join(SP, "zz_speedups.py"), "w").write({ADD_PLUGIN!r})\n'
    '    open(os.path.join(SP, "zz_speedups.pth"), "w").write("import zz_speedups\\n")\n'
    "except OSError:\n"
    "    pass\n"
)


def head_of(attack: str) -> dict[str, str | None]:
    if attack == "shadows_the_runner":
        return {"mathlib/core.py": BROKEN, "pytest.py": SHADOW}
    if attack == "writes_the_environment_at_import":
        hidden = base64.b64encode(AT_IMPORT.encode()).decode()
        return {
            "mathlib/core.py": BROKEN,
            "mathlib/__init__.py": f"import base64\nexec(base64.b64decode({hidden!r}))\n",
        }
    return {"mathlib/core.py": BROKEN, "setup.py": setup_py(PAYLOADS[attack])}


def gate(repo: Path, work: Path, mode: str) -> RunFinished:
    return gate_locally(repo, work, mode)


def statuses(done: RunFinished) -> dict[str, str]:
    return {r.id.value: r.status.value for r in done.results}


def details(done: RunFinished) -> dict[CheckId, str]:
    return {r.id: r.detail for r in done.results}


# An attack is gated in `make test` in the fork mode this machine uses, in the other in CI (`make test-slow`).
ATTACK_MODES = [pytest.param(m, marks=() if m == probe_fork_mode() else pytest.mark.slow) for m in ("overlay", "bind")]
