"""The diff rule for test code that reads the library's code instead of
running it (stacks/python/source_reads.py), through the python hook scan.

A new test that pins the module file's hash, `inspect.getsource`'s text or
the function's bytecode makes every mutant of `bites` fail without checking
any behaviour. Each way below is named on its line (old_tests fails, the
verdict is review); the honest shapes beside them are not: a test's own
`__file__` to find its data, a package's folder found to read data beside
it, the project's own function named `getsource`, a file of a library
module's name written somewhere else.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatetui.git.snapshot import Snapshot
from gatetui.stacks.python.hooks import scan_hooks
from gatetui.stacks.python.source_reads import WHAT

LIBRARY = {
    "mathlib/__init__.py": "",
    "mathlib/core.py": "def is_leap(year):\n    return year % 4 == 0\n",
    "mathlib/data.json": "{}\n",
    "setup.py": "from setuptools import setup\n\nsetup()\n",
    "docs/conf.py": "project = 'mathlib'\n",
}
IMPORTS = (
    "import dis\nimport hashlib\nimport inspect\nimport linecache\nimport os\nimport os.path\nimport pkgutil\n"
    "import importlib.util\nfrom importlib.resources import files\nfrom pathlib import Path\n\n"
    "import pytest\n\nimport mathlib\nimport mathlib.core\nfrom mathlib import core\n"
    "from mathlib.core import is_leap\n\n\ndef test_leap():\n"
)
LINE = IMPORTS.count("\n") + 1  # the first line of the test's body


def reaches(
    body: str,
    path: str = "tests/test_leap.py",
    head_files: dict[str, str] | None = None,
    base_files: dict[str, str] | None = None,
) -> list[tuple[str, str]]:
    base = {**LIBRARY, **(base_files or {})}
    head = {**base, **(head_files or {}), path: IMPORTS + body + "\n"}
    found = scan_hooks(Snapshot.of_files(base), Snapshot.of_files(head), lambda p: p.startswith("tests/test_"))
    return [(f.path, f.what) for f in found.reaches]


def named(*lines: int, body: str, path: str = "tests/test_leap.py") -> list[tuple[str, str]]:
    text = body.split("\n")
    return [(f"{path}:{LINE + n}", f"{WHAT}: {text[n].strip()[:80]}") for n in lines]


@pytest.mark.parametrize(
    "body",
    [
        '    assert hashlib.sha256(open(mathlib.core.__file__, "rb").read()).hexdigest() == "ab12"',
        "    assert os.stat(core.__file__).st_size == 120",
        "    assert os.path.getmtime(mathlib.core.__file__) > 0",
        '    assert Path(core.__file__).read_text().count("%") == 2',
        '    assert Path(core.__file__).resolve().read_bytes() != b""',
        '    assert inspect.getsource(is_leap) == "def is_leap(year): ..."',
        "    assert len(inspect.getsourcelines(core)[0]) == 2",
        "    assert inspect.getsourcefile(is_leap).endswith('core.py')",
        "    assert inspect.getfile(core)",
        '    assert "".join(linecache.getlines(core.__file__))',
        '    assert is_leap.__code__.co_code.hex() == "9700"',
        "    assert is_leap.__code__.co_consts == (None, 4, 0)",
        '    assert getattr(is_leap, "__code__").co_names == ()',
        "    assert [i.opname for i in dis.get_instructions(is_leap)] == []",
        '    assert hashlib.sha256(files("mathlib").joinpath("core.py").read_bytes()).hexdigest() == "ab"',
        '    assert Path("mathlib/core.py").read_bytes()',
        '    assert open("./mathlib/core.py").read()',
        '    assert os.popen("sha256sum mathlib/core.py").read().startswith("ab")',
        '    assert pkgutil.get_data("mathlib", "core.py")',
        '    assert importlib.util.find_spec("mathlib.core").origin.endswith(".py")',
        "    assert open(mathlib.core.__spec__.origin).read()",
        '    assert hashlib.sha256(b"".join(p.read_bytes() for p in Path(mathlib.__file__).parent.glob("*.py")))',
        '    assert sorted(p.name for p in (Path(__file__).parent.parent / "mathlib").rglob("*.py"))',
        '    assert (Path(mathlib.__path__[0]) / "core.py").stat().st_size == 60',
    ],
)
def test_a_test_line_that_reads_the_library_is_named(body: str) -> None:
    assert reaches(body) == named(0, body=body)


def test_each_way_is_named_by_its_own_import() -> None:
    """`from inspect import getsource` and `from dis import dis` read as
    inspect's and dis's; a module imported under another name too."""
    body = (
        "    from inspect import getsource as source\n    from dis import dis as show\n    import linecache as lc\n"
        "    assert source(is_leap)\n    show(is_leap)\n    assert lc.getline(core.__file__, 1)"
    )
    assert reaches(body) == named(3, 4, 5, body=body)


def test_a_walk_over_the_package_by_its_folder_is_named_where_it_picks_python_files() -> None:
    body = (
        "    digest = hashlib.sha256()\n    for folder, _, names in os.walk(os.path.dirname(mathlib.__file__)):\n"
        '        for name in sorted(names):\n            if name.endswith(".py"):\n'
        '                digest.update(open(os.path.join(folder, name), "rb").read())\n'
        '    assert digest.hexdigest() == "ab"'
    )
    assert reaches(body) == named(3, body=body)


@pytest.mark.parametrize(
    "body",
    [
        '    data = Path(__file__).parent / "data" / "years.json"',  # the test's own file
        '    assert open(os.path.join(os.path.dirname(__file__), "data", "years.txt")).read()',
        '    assert (Path(mathlib.__file__).parent / "data.json").read_text() == "{}"',  # data beside the package
        '    assert (Path(core.__file__).resolve().parent / "data.json").exists()',
        "    assert os.path.isdir(os.path.dirname(core.__file__))",
        # where the module was imported from, by its path's parts (test_self_pin's head): nothing is read
        "    assert 'site-packages' not in pathlib.Path(mathlib.__file__).parts",
        "    assert pytest.__file__",  # a module from outside the project
        "    assert is_leap(2024) and not is_leap(2023)",
        '    assert "core.py" in mathlib.describe()',  # a file name, where the package is not found
        '    (tmp := Path("out")).joinpath("main.py").write_text("x = 1")',
        "    assert inspect.isfunction(is_leap) and inspect.signature(is_leap)",  # what it is, not its text
        "    # inspect.getsource(is_leap) would pin the text",
        '    assert "inspect.getsource(f)" in mathlib.__doc__ or True',
        # a module's file set, deleted or compared as a path (humanize's and toolz's tests)
        "    core.__file__ = None",
        "    del core.__file__",
        "    assert mathlib.__file__ != core.__file__",
        # the code of what the test itself defines (pluggy's tests read where a hook was declared)
        "    class Plugin:\n        def foo(self):\n            pass\n    assert Plugin.foo.__code__.co_firstlineno > 0",
        "    def helper():\n        return 1\n    assert inspect.getsource(helper).startswith('def')",
        # a build's script is no library module (click's tests glob their docs' conf.py)
        '    assert os.path.join("docs", "conf.py") in mathlib.expand(["docs", "**/conf.py"])',
    ],
)
def test_a_test_line_that_reads_no_library_code_is_not_named(body: str) -> None:
    assert reaches(body) == []


def test_the_projects_own_getsource_is_its_behaviour() -> None:
    """A project whose function is called getsource, tested as a user calls it."""
    library = {"mathlib/source.py": "def getsource(name):\n    return name.upper()\n"}
    body = '    from mathlib.source import getsource\n    assert getsource("x") == "X"'
    assert reaches(body, head_files=library, base_files=library) == []


def test_only_added_lines_and_only_test_code_are_read() -> None:
    line = '    assert inspect.getsource(is_leap) == "x"'
    old = IMPORTS + line + "\n"
    assert reaches(line, base_files={"tests/test_leap.py": old}) == []
    assert reaches(line + "\n    assert is_leap.__code__", base_files={"tests/test_leap.py": old}) == [
        (f"tests/test_leap.py:{LINE + 1}", f"{WHAT}: assert is_leap.__code__")
    ]
    # a helper beside the tests is test code; the library's own lines are the library rules' to judge
    # (the library rules judge a helper as library code too: its `import pytest` is theirs)
    assert [r for r in reaches(line, path="tests/pins.py") if r[1].startswith(WHAT)] == named(
        0, body=line, path="tests/pins.py"
    )
    assert [r for r in reaches(line, path="mathlib/checks.py") if r[1].startswith(WHAT)] == []


@settings(max_examples=200, deadline=None)
@given(st.text(string.printable, max_size=200))
def test_any_text_gives_findings_only_on_its_own_lines(body: str) -> None:
    """Head's text may be anything: never an exception, and a finding only
    names a line of the test file that head added."""
    found = reaches(body)
    total = (IMPORTS + body + "\n").count("\n") + 1
    assert all(p.startswith("tests/test_leap.py:") and LINE <= int(p.split(":")[1]) <= total for p, _ in found)
