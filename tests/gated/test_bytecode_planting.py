"""Bytecode planted during a run, for a module the run imports later, is
never loaded: each command's pycache prefix is made by the sandbox and is
read-only to the command (it holds only the layer's own bytecode).

Head's library module, imported by base's first test file, writes bytecode
that says "all is well" for base's second test file (pytest's rewrite
cache, hash-checked: the source's hash is head's to compute) or for a
helper that file imports (Python's own timestamp bytecode), then breaks
`mul`. Where the plant loads, every run passes on broken code.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gatetui.backends.isolation import probe_isolation
from gatetui.gate.checks import CheckId, Verdict
from tests.support.gating import gate_locally
from tests.support.local import fork_mode_or_skip
from tests.support.phases import ATTACK_MODES, BASE, BROKEN
from tests.support.repos import MakeRepo

pytestmark = [
    pytest.mark.skipif(
        not probe_isolation().full, reason=f"the local backend cannot isolate runs here ({probe_isolation().reason})"
    ),
    pytest.mark.sandbox,
    pytest.mark.install,
]

TWO_FILES = {
    **{k: v for k, v in BASE.items() if k != "tests/test_math.py"},
    "tests/test_add.py": "from mathlib.core import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "tests/helpers.py": "from mathlib.core import mul\n\n\ndef twelve():\n    return mul(3, 4)\n",
    "tests/test_mul.py": "from helpers import twelve\n\n\ndef test_mul():\n    assert twelve() == 12\n",
}
# Runs when base's test_add.py imports mathlib: pytest's hash-checked cache for test_mul.py.
REWRITE_CACHE = textwrap.dedent("""\
    import importlib.metadata, importlib.util, marshal, os, sys


    def _plant():
        source = os.path.join(os.getcwd(), "tests", "test_mul.py")
        folder = (sys.pycache_prefix or "") + os.path.dirname(source)
        name = "test_mul.%s-%s-%s.pyc" % (sys.implementation.cache_tag, "py" + "test",
                                          importlib.metadata.version("py" + "test"))
        code = compile("def test_mul():\\n    pass\\n", source, "exec")
        data = open(source, "rb").read()
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, name), "wb") as out:
            out.write(importlib.util.MAGIC_NUMBER + (3).to_bytes(4, "little")
                      + importlib.util.source_hash(data)[:8] + marshal.dumps(code))


    try:
        _plant()
    except OSError:
        pass
    """)
# Python's own timestamp bytecode for the helper test_mul.py imports: twelve() is 12 again.
HELPER_CACHE = textwrap.dedent("""\
    import importlib.util, marshal, os


    def _plant():
        source = os.path.join(os.getcwd(), "tests", "helpers.py")
        target = importlib.util.cache_from_source(source)
        info = os.stat(source)
        code = compile("def twelve():\\n    return 12\\n", source, "exec")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as out:
            out.write(importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little")
                      + (int(info.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
                      + (info.st_size & 0xFFFFFFFF).to_bytes(4, "little") + marshal.dumps(code))


    try:
        _plant()
    except OSError:
        pass
    """)


@pytest.mark.parametrize("mode", ATTACK_MODES)
@pytest.mark.parametrize("plant", [REWRITE_CACHE, HELPER_CACHE], ids=["pytests_rewrite_cache", "a_helpers_bytecode"])
def test_bytecode_planted_during_a_run_is_never_loaded(
    make_repo: MakeRepo, tmp_path: Path, plant: str, mode: str
) -> None:
    repo = make_repo(TWO_FILES, {"mathlib/core.py": BROKEN, "mathlib/__init__.py": plant})
    done = gate_locally(repo, tmp_path / "work", fork_mode_or_skip(mode))
    runs = next(r for r in done.results if r.id is CheckId.RUNS)
    assert (done.verdict, runs.status.value) == (Verdict.FAIL, "fail")
    assert "tests/test_mul.py::test_mul failed" in runs.detail
