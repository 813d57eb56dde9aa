"""Changes as the diff scanner reads them, and hypothesis strategies for the
sources they hold."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from gatetui.gate.diff.scan import DiffScan
from gatetui.git.changes import FileChange

PY = "tests/test_sample.py"

JS = "src/sample.test.ts"


def modify(path: str, old: str, new: str) -> FileChange:
    return FileChange("modify", path, path, old.encode(), new.encode())


def kinds(scan: DiffScan) -> list[tuple[int, str]]:
    return [(m.line, m.kind) for m in scan.markers]


PY_FRAGMENTS = [
    "def test_{n}():\n    assert True\n",
    "async def test_{n}():\n    await x\n",
    "class Test{n}:\n    def test_{n}(self):\n        pass\n\n    async def test_{n}_b(self):\n        pass\n",
    "class Outer{n}:\n    class Inner:\n        def test_{n}(self):\n            pass\n",
    "def helper_{n}():\n    def test_inner():\n        pass\n    return test_inner\n",
    "@pytest.mark.skip(reason='x')\ndef test_{n}():\n    pass\n",
    "@pytest.mark.xfail\ndef test_{n}():\n    pytest.skip('no')\n",
    "x_{n} = '''\ndef test_fake_{n}():\n    pytest.skip()\n'''\n",
    "# def test_comment_{n}(): pytest.skip()\n",
    "if True:\n    def test_{n}():\n        pass\n",
    "data_{n} = [\n    1,\n2,\n]\n",
    'value_{n} = ("""\ntext\n""" + \'x\')\n',
    "class Test{n}:\n    x = (\n1)\n    def test_{n}(self):\n        pass\n",
    "def test_{n}(): self.skipTest('r')\n",
    "pytestmark = pytest.mark.skipif(True, reason='x')\n",
    "long_{n} = 1 + \\\n    2\n",
]

PY_BROKEN = ["def test_{n}(:\n    pass\n", "x_{n} = (\n", "s_{n} = '''unterminated\n", "  oops_{n}\n"]


def _assemble(fragments: list[str], picks: list[int]) -> str:
    return "".join(
        fragments[p].replace("{{", "{").replace("}}", "}").replace("{n}", str(i)) for i, p in enumerate(picks)
    )


def py_sources(broken: bool = True) -> st.SearchStrategy[str]:
    pool = PY_FRAGMENTS + (PY_BROKEN if broken else [])
    return st.lists(st.integers(0, len(pool) - 1), max_size=12).map(lambda p: _assemble(pool, p))


FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# Text made of the characters lexers trip over, with marker-ish letters.
TRICKY = st.text(alphabet=st.sampled_from(list("'\"`/\\*#{}()[]$@.:,=;\n\t abdefikopstxy_")), max_size=200)
