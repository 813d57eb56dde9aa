"""The search for an input that tells a surviving mutant apart
(stacks/mutant_search.py, stacks/python/input_search.py and the two scripts
it ships), run for real: pytest with the recorder over a small tree, then
the search script with head's interpreter, as a gate's copies run them.

What it protects: a survivor with a distinguishing input is shown with it
(the test the change lacks); one no input tells apart is named likely
equivalent only after a thorough search; anything the search cannot judge
(objects compared by identity, a run that wrote nothing readable) leaves
the survivor as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatetui.stacks.mutant_search import Call, Found, SearchJob, read_calls, read_found
from gatetui.stacks.mutation import Mutant
from gatetui.stacks.python.input_search import recorder, searcher, target

CLAMP = textwrap.dedent("""\
    def clamp(value, low, high):
        if value < low:
            return low
        if value > high:
            return high
        return value
    """)
LEAP = "def is_leap(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n"


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in {"pkg/__init__.py": "", **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".gate").mkdir(exist_ok=True)
    return root


def env(root: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": f"{root / '.gate'}{os.pathsep}{root}",
        "PYTHONSAFEPATH": "1",
        "PYTEST_ADDOPTS": "-p no:randomly -p no:cacheprovider",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # as in the gate's runs: only the plugins named load
    }


def record(root: Path, path: str, function: str) -> tuple[str, tuple[Call, ...]] | None:
    """The recorder loaded into a real pytest run of the tree's tests."""
    out = root.parent / "calls.json"
    plugin = recorder(path, function, str(out))
    for name, data in plugin.files.items():
        (root / ".gate" / name).write_bytes(data)
    run_env = env(root)
    run_env["PYTEST_ADDOPTS"] += f" {plugin.env_for(str(root / '.gate'))['PYTEST_ADDOPTS']}"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "tests"],
        cwd=root,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return read_calls(out.read_bytes() if out.exists() else None)


def as_mutant(head: str, text: str) -> Mutant:
    """A mutant of pkg/core.py: its first line that differs from head's is the mutated one."""
    pairs = list(zip(head.splitlines(), text.splitlines()))
    line = next((i for i, (a, b) in enumerate(pairs, 1) if a != b), len(pairs) + 1)
    return Mutant("pkg/core.py", line, "test", "", "", text.encode())


def search(
    root: Path, module: str, function: str, calls: tuple[Call, ...], mutants: dict[str, str]
) -> dict[str, Found]:
    """The search script run as a gate's copy runs it: head's interpreter, the tests' environment."""
    out = root.parent / "found.json"
    head = (root / "pkg" / "core.py").read_text()
    plugin, command = searcher(SearchJob(module, function, calls, {k: as_mutant(head, v) for k, v in mutants.items()}))
    for name, data in plugin.files.items():
        (root / ".gate" / name).write_bytes(data)
    line = command.replace(".venv/bin/python", sys.executable).replace("{folder}", str(root / ".gate"))
    done = subprocess.run(
        line.replace("{out}", str(out)),
        shell=True,
        cwd=root,
        env=env(root),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return read_found(out.read_bytes(), frozenset(mutants))


@pytest.mark.drives
def test_the_recorder_keeps_the_plain_calls_the_tests_make(tmp_path: Path) -> None:
    root = tree(
        tmp_path / "t",
        {
            "pkg/core.py": CLAMP + "\n\nclass Box:\n    pass\n",
            "tests/test_core.py": (
                "from pkg.core import Box, clamp\n\n\ndef test_clamp():\n    assert clamp(11, 0, 10) == 10\n"
                "    assert clamp(11, 0, 10) == 10\n    assert clamp(5, low=0, high=10) == 5\n"
                "    assert clamp([1], [0], [2]) == [1]\n    try:\n        clamp(Box(), 0, 10)\n    except TypeError:\n"
                "        pass\n"
            ),
        },
    )
    module, calls = record(root, "pkg/core.py", "clamp") or ("", ())
    # once each, in the order made; the objects' call is not plain and is left out
    assert (module, calls) == (
        "pkg.core",
        (Call(("11", "0", "10")), Call(("5", "0", "10")), Call(("[1]", "[0]", "[2]"))),
    )


def test_an_honest_boundary_mutant_is_likely_equivalent(tmp_path: Path) -> None:
    root = tree(tmp_path / "t", {"pkg/core.py": CLAMP})
    calls = (Call(("11", "0", "10")), Call(("10", "0", "10")))
    found = search(root, "pkg.core", "clamp", calls, {"ge": CLAMP.replace("value > high", "value >= high")})
    assert found["ge"].call == "" and (found["ge"].returned >= 100 or found["ge"].every and found["ge"].returned >= 8)


def test_a_missing_test_is_found_and_shown_as_one(tmp_path: Path) -> None:
    """The tests check 5 and 12, never 11: `value > high + 1` survives them."""
    root = tree(tmp_path / "t", {"pkg/core.py": CLAMP})
    calls = (Call(("5", "0", "10")), Call(("12", "0", "10")))
    found = search(root, "pkg.core", "clamp", calls, {"off": CLAMP.replace("value > high", "value > high + 1")})
    assert (found["off"].call, found["off"].here, found["off"].there) == ("clamp(11, 0, 10)", "10", "11")


def test_the_codes_own_literals_find_a_difference_random_numbers_miss(tmp_path: Path) -> None:
    """No test calls a century year; `year % 401` differs only at multiples
    of 400 (not 0), which random integers almost never are: the code's own
    400 is tried."""
    root = tree(tmp_path / "t", {"pkg/core.py": LEAP})
    calls = (Call(("2023",)), Call(("2024",)))
    found = search(root, "pkg.core", "is_leap", calls, {"401": LEAP.replace("% 400", "% 401")})
    year = int(found["401"].call.removeprefix("is_leap(").removesuffix(")"))
    assert (year % 400, year % 401 != 0, found["401"].here, found["401"].there) == (0, True, "True", "False")


def test_an_integer_literal_is_tried_for_a_float_argument(tmp_path: Path) -> None:
    """humanize's naturaldelta compares seconds with 60; its tests pass
    floats far from it: `< 60` made `<= 60` differs at 60.0."""
    code = "def unit(seconds):\n    if seconds < 60:\n        return 'seconds'\n    return 'minutes'\n"
    root = tree(tmp_path / "t", {"pkg/core.py": code})
    found = search(
        root,
        "pkg.core",
        "unit",
        (Call(("1.5",)), Call(("3000.0",))),
        {"0": code.replace("seconds < 60", "seconds <= 60")},
    )
    assert (found["0"].call, found["0"].here, found["0"].there) == ("unit(60.0)", "'minutes'", "'seconds'")


def test_an_argument_changed_in_place_is_a_result(tmp_path: Path) -> None:
    grow = "def grow(items, n):\n    items.append(n)\n    return None\n"
    root = tree(tmp_path / "t", {"pkg/core.py": grow})
    found = search(
        root, "pkg.core", "grow", (Call(("[1]", "2")),), {"0": grow.replace("items.append(n)", "items.append(n + 1)")}
    )
    assert found["0"].here.startswith("None, leaves [") and found["0"].here != found["0"].there


def test_what_a_function_leaves_in_its_module_is_a_result(tmp_path: Path) -> None:
    """A function that returns None and keeps its answer in the module (a
    log, a cache): the mutant that logs the wrong value is told apart."""
    log = "_SEEN = []\n\n\ndef note(n):\n    _SEEN.append(n * 2)\n"
    root = tree(tmp_path / "t", {"pkg/core.py": log})
    found = search(root, "pkg.core", "note", (Call(("3",)),), {"0": log.replace("n * 2", "n * 3")})
    assert found["0"].call.startswith("note(")
    assert found["0"].here.startswith("None, leaves _SEEN = [") and found["0"].here != found["0"].there


def test_results_compared_only_by_identity_get_no_answer(tmp_path: Path) -> None:
    boxed = "class Box:\n    pass\n\n\ndef box(n):\n    b = Box()\n    b.n = n\n    return b\n"
    root = tree(tmp_path / "t", {"pkg/core.py": boxed})
    assert search(root, "pkg.core", "box", (Call(("1",)),), {"0": boxed.replace("b.n = n", "b.n = n + 1")}) == {}


def test_the_modules_own_records_compare_by_what_they_hold(tmp_path: Path) -> None:
    """A dataclass from head's module and one from the mutant's copy are
    two classes of one name: the same fields are the same result."""
    made = (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass Span:\n    start: int\n    end: int\n\n\n"
        "def span(a, b):\n    return Span(min(a, b), max(a, b))\n"
    )
    root = tree(tmp_path / "t", {"pkg/core.py": made})
    found = search(
        root,
        "pkg.core",
        "span",
        (Call(("1", "5")),),
        {"same": made.replace("min(a, b)", "min(b, a)"), "off": made.replace("max(a, b)", "max(a, b) + 1")},
    )
    assert found["same"].call == ""
    assert found["off"].here.startswith("Span(start=") and found["off"].here != found["off"].there


def test_a_mutant_that_spins_is_not_told_apart_by_it(tmp_path: Path) -> None:
    """A call that runs past its limit tells nothing: only a finished,
    different result counts."""
    code = "def half(n):\n    return n // 2\n"
    root = tree(tmp_path / "t", {"pkg/core.py": code})
    spin = code.replace("return n // 2", "while n == 5:\n        pass\n    return n // 2")
    found = search(root, "pkg.core", "half", (Call(("4",)),), {"0": spin})
    assert found["0"].call == ""


def test_only_plain_top_level_functions_are_searched() -> None:
    text = textwrap.dedent("""\
        def plain(a, b=1, *, c=2):
            return a + b + c


        def spread(*args):
            return args


        def gen(n):
            yield n


        async def later(n):
            return n


        class Thing:
            def method(self, n):
                return n
        """)
    lines = {
        name: text.splitlines().index(next(line for line in text.splitlines() if name in line)) + 2
        for name in ("plain", "spread", "gen", "later", "method")
    }
    assert {name: target("m.py", text, line) for name, line in lines.items()} == {
        "plain": "plain",
        "spread": None,
        "gen": None,
        "later": None,
        "method": None,
    }
    assert target("m.py", "def broken(:\n", 1) is None


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=300),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=12),
            lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
            max_leaves=12,
        ).map(lambda v: json.dumps(v).encode()),
    )
)
def test_the_readers_take_any_reply_without_raising(raw: bytes) -> None:
    calls = read_calls(raw)
    found = read_found(raw, frozenset({"0", "1"}))
    assert calls is None or all(isinstance(c, Call) for c in calls[1])
    assert set(found) <= {"0", "1"}


def test_the_readers_take_only_their_shape() -> None:
    assert read_calls(b'{"module": "os; rm", "calls": []}') is None
    assert read_calls(b'{"module": "pkg.core", "calls": [{"args": [1], "kwargs": {}}]}') is None
    assert read_calls(b'{"module": "pkg.core", "calls": [{"args": ["1"], "kwargs": {"k": "2"}}]}') == (
        "pkg.core",
        (Call(("1",), (("k", "2"),)),),
    )
    reply = (
        b'{"mutants": {"0": {"found": ["f(1)", "1", "2"]}, "1": {"none": 300}, "2": {"none": true}, "9": {"none": 1}}}'
    )
    assert read_found(reply, frozenset({"0", "1", "2"})) == {"0": Found("f(1)", "1", "2"), "1": Found(returned=300)}
    assert read_found(None, frozenset({"0"})) == read_found(b"\xff", frozenset({"0"})) == {}
