"""Which of head's files its distribution ships: `covered` and
`bites` judge those and count the rest apart. The trees are laid out as
the release corpus's projects lay theirs out (bench/RELEASES.md): six's
Sphinx conf.py, boltons' misc/ scripts, pyparsing's examples/."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.diff.changed_code import ChangedCode, changed_code
from gatetui.gate.phases.coverage import NOTHING, judge_covered
from gatetui.git.changes import FileChange
from gatetui.git.snapshot import Snapshot
from gatetui.stacks.python.coverage_lines import PYTHON_COVERAGE
from gatetui.stacks.python.project_code import project_roots, shipped_code
from gatetui.stacks.registry import load_judge, load_profile
from tests.support.coverage import plan_answers
from tests.support.repos import MakeRepo

FLIT = '[build-system]\nrequires = ["flit_core >=3.2,<4"]\nbuild-backend = "flit_core.buildapi"\n'
SETUPTOOLS = '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
HATCH = '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
CODE = "X = 1\n"
BESIDE = {
    "docs/conf.py": CODE,
    "examples/demo.py": CODE,
    "misc/bench.py": CODE,
    "tests/test_a.py": CODE,
    "tools/make_data.py": CODE,
}


def roots(files: dict[str, str]) -> tuple[str, ...]:
    return project_roots(Snapshot.of_files({**BESIDE, **files}))


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # flit: the project's name (boltons, pyparsing, idna), or the module it names under src/ (itsdangerous)
        (
            {"pyproject.toml": FLIT + '[project]\nname = "boltons"\n', "boltons/__init__.py": "", "boltons/x.py": CODE},
            ("boltons",),
        ),
        (
            {
                "pyproject.toml": FLIT
                + '[project]\nname = "its-dangerous"\n[tool.flit.module]\nname = "itsdangerous"\n',
                "src/itsdangerous/__init__.py": "",
            },
            ("src/itsdangerous",),
        ),
        (
            {"pyproject.toml": FLIT + '[project]\nname = "more-itertools"\n', "more_itertools/__init__.py": ""},
            ("more_itertools",),
        ),
        # setuptools from setup.py's literals (six), setup.cfg's find: under src (cachetools), pyproject's table
        (
            {"setup.py": 'from setuptools import setup\nsetup(name="six", py_modules=["six"])\n', "six.py": CODE},
            ("six.py",),
        ),
        (
            {
                "setup.py": "from setuptools import setup\nsetup(package_dir={'': 'src'}, packages=['text_unidecode'])\n",
                "src/text_unidecode/__init__.py": "",
            },
            ("src/text_unidecode",),
        ),
        (
            {
                "setup.py": "from setuptools import setup, find_packages\nsetup(packages=find_packages(exclude=['misc']))\n",
                "lib/__init__.py": "",
                "misc/__init__.py": "",
            },
            ("lib",),
        ),
        (
            {
                "pyproject.toml": SETUPTOOLS,
                "setup.cfg": "[options]\npackage_dir =\n    = src\npackages = find:\n"
                "[options.packages.find]\nwhere = src\n",
                "src/cachetools/__init__.py": "",
            },
            ("src/cachetools",),
        ),
        (
            {
                "pyproject.toml": SETUPTOOLS + '[tool.setuptools]\npackages = ["pluggy"]\npackage-dir = {"" = "src"}\n',
                "src/pluggy/__init__.py": "",
            },
            ("src/pluggy",),
        ),
        (
            {
                "pyproject.toml": SETUPTOOLS + '[tool.setuptools.packages.find]\ninclude = ["gate*"]\n',
                "gatekeep/__init__.py": "",
                "other/__init__.py": "",
            },
            ("gatekeep",),
        ),
        # setuptools' own discovery: all of src/, else the flat layout's names but the ones it leaves out
        (
            {"pyproject.toml": SETUPTOOLS, "src/unitlib/__init__.py": "", "src/single.py": CODE},
            ("src/single.py", "src/unitlib"),
        ),
        (
            {
                "pyproject.toml": '[project]\nname = "p"\n',
                "pkg/core.py": CODE,
                "noxfile.py": CODE,
                "setup.py": "from setuptools import setup\nsetup()\n",
                "helpers.py": CODE,
            },
            ("helpers.py", "misc", "pkg"),
        ),
        # hatchling: its default (the name under src/: humanize), or the packages it names
        (
            {"pyproject.toml": HATCH + '[project]\nname = "humanize"\n', "src/humanize/__init__.py": ""},
            ("src/humanize",),
        ),
        (
            {
                "pyproject.toml": HATCH
                + '[project]\nname = "x"\n[tool.hatch.build.targets.wheel]\npackages = ["lib/y"]\n',
                "lib/y/__init__.py": "",
            },
            ("lib/y",),
        ),
        (
            {
                "pyproject.toml": '[build-system]\nbuild-backend = "poetry.core.masonry.api"\n[tool.poetry]\nname = "p"\n'
                'packages = [{include = "q", from = "src"}]\n',
                "src/q/__init__.py": "",
            },
            ("src/q",),
        ),
    ],
)
def test_the_roots_are_what_the_backend_puts_in_the_wheel(files: dict[str, str], expected: tuple[str, ...]) -> None:
    assert roots(files) == expected


@pytest.mark.parametrize(
    "files",
    [
        {"setup.py": "from setuptools import setup\nsetup(packages=compute())\n", "pkg/__init__.py": ""},
        {"setup.py": "from setuptools import setup\nsetup(**options)\n", "pkg/__init__.py": ""},
        {"setup.py": "def broken(:\n", "pkg/__init__.py": ""},
        {"pyproject.toml": "[project\n", "pkg/__init__.py": ""},
        {"pyproject.toml": FLIT + '[project]\nname = "absent"\n'},
        {"pyproject.toml": HATCH + '[project]\nname = "x"\n[tool.hatch.build]\ninclude = ["*.py"]\n', "x.py": CODE},
    ],
)
def test_what_the_configuration_does_not_say_as_data_leaves_every_file_judged(files: dict[str, str]) -> None:
    assert shipped_code(Snapshot.of_files({**BESIDE, **files})) is None


def test_shipped_is_the_package_folder_and_the_module_files_under_it_only() -> None:
    shipped = shipped_code(
        Snapshot.of_files(
            {
                **BESIDE,
                "pyproject.toml": FLIT + '[project]\nname = "pyparsing"\n',
                "pyparsing/__init__.py": "",
                "pyparsing_extra.py": CODE,
            }
        )
    )
    assert shipped is not None
    assert [
        shipped(p)
        for p in (
            "pyparsing/core.py",
            "pyparsing/diagram/__init__.py",
            "pyparsing_extra.py",
            "examples/demo.py",
            "docs/conf.py",
        )
    ] == [True, True, False, False, False]


SIX = 'from setuptools import setup\nsetup(name="six", py_modules=["six"])\n'


def test_changed_lines_outside_the_packages_are_counted_and_said_not_judged() -> None:
    """six 1.17: documentation/conf.py's copyright changed beside six.py's
    code; boltons 25.0: misc/ scripts beside the package."""
    files = {
        "setup.py": SIX,
        "six.py": "A = 1\nB = 2\n",
        "documentation/conf.py": 'copyright = u"2010-2024"\n',
        "misc/bench.py": "import time\nSTART = time.time()\nprint(START)\n",
        "test_six.py": CODE,
    }
    head = Snapshot.of_files(files)
    profile = load_profile(head)
    changes = [FileChange("add", None, path, None, text.encode()) for path, text in files.items()]
    found = changed_code(changes, profile, load_judge(head).policy.sealed, PYTHON_COVERAGE, head)
    assert (dict(found.lines), dict(found.outside)) == (
        {"six.py": frozenset({1, 2})},
        {"documentation/conf.py": 1, "misc/bench.py": 3},
    )
    reached = {("six.py", 1): frozenset({"test_six.py::test_a"})}
    assert judge_covered(found, reached, "").detail.splitlines()[0] == (
        "1 of 2 changed lines run under no test: six.py:2; 4 changed lines outside the project's packages "
        "not judged (documentation/conf.py, misc/bench.py)"
    )
    reached[("six.py", 2)] = frozenset()
    assert judge_covered(found, reached, "") == CheckResult(
        CheckId.COVERED,
        Status.PASS,
        (
            "all 2 changed lines run, 1 under 1 tests, 1 only at import or collection (bites judges them); "
            "4 changed lines outside the project's packages not judged (documentation/conf.py, misc/bench.py)"
        ),
    )


def test_the_files_left_out_are_named_up_to_three() -> None:
    changed = ChangedCode(outside={f"misc/m{n}.py": 1 for n in range(5)})
    assert changed.left_out() == (
        "5 changed lines outside the project's packages not judged (misc/m0.py, misc/m1.py, misc/m2.py and 2 more)"
    )
    assert ChangedCode().left_out() == ""


PROJECT = {
    "pyproject.toml": FLIT + '[project]\nname = "pkg"\nversion = "0"\n',
    "pkg/__init__.py": "",
    "pkg/core.py": "def one():\n    return 1\n",
    "tests/test_core.py": "from pkg.core import one\n\n\ndef test_one():\n    assert one() == 1\n",
}


def test_with_the_plan_a_change_outside_the_packages_alone_skips_both_and_says_so(make_repo: MakeRepo) -> None:
    repo = make_repo(
        PROJECT,
        {
            "examples/demo.py": "from pkg.core import one\n\nprint(one())\n",
            "documentation/conf.py": 'project = "pkg"\n',
        },
    )
    skipped = (
        f"{NOTHING}; 3 changed lines outside the project's packages not judged "
        "(documentation/conf.py, examples/demo.py)"
    )
    assert plan_answers(repo) == [
        CheckResult(CheckId.COVERED, Status.SKIPPED, skipped),
        CheckResult(CheckId.BITES, Status.SKIPPED, skipped),
    ]


KEYS = st.sampled_from(
    [
        "build-system",
        "build-backend",
        "tool",
        "flit",
        "module",
        "metadata",
        "name",
        "hatch",
        "build",
        "targets",
        "wheel",
        "packages",
        "only-include",
        "include",
        "poetry",
        "from",
        "pdm",
        "includes",
        "package-dir",
        "setuptools",
        "py-modules",
        "find",
        "where",
        "exclude",
        "namespaces",
        "project",
        "",
        "pkg",
    ]
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from(
        [
            "flit_core.buildapi",
            "hatchling.build",
            "poetry.core.masonry.api",
            "pdm.backend",
            "setuptools.build_meta",
            "pkg",
            "src",
            "src/pkg",
            "pkg*",
            "*",
            "",
            ".",
            "/",
            "../x",
        ]
    )
)
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=12
)


def toml(value: object) -> str:
    """A value as TOML's inline syntax (None as a table with nothing in it)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    return "{}" if value is None else json.dumps(value)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(KEYS, VALUES, max_size=4),
    st.sampled_from(
        [
            "",
            "setup()",
            "setup(packages=find_packages(where=1, include=2))",
            "setup(packages=[1, 'pkg'])",
            "setup(package_dir=['x'], py_modules='pkg')",
            "setup(packages=find_namespace_packages('src', 'x'))",
        ]
    ),
)
def test_any_configuration_gives_roots_the_tree_holds_or_none(pyproject: dict[str, object], setup: str) -> None:
    files = {
        "pyproject.toml": "\n".join(f"{json.dumps(k)} = {toml(v)}" for k, v in pyproject.items()),
        "pkg/__init__.py": "",
        "src/pkg/__init__.py": "",
        "x.py": CODE,
        **BESIDE,
    }
    head = Snapshot.of_files({**files, **({"setup.py": f"from setuptools import *\n{setup}\n"} if setup else {})})
    assert all(root in head or head.has_dir(root) for root in project_roots(head))


def test_the_version_file_the_build_writes_is_no_changed_code() -> None:
    """pluggy 1.5: the sdist ships src/pluggy/_version.py, which the build
    writes anew; no test is there to run it."""
    files = {
        "pyproject.toml": '[tool.setuptools_scm]\nwrite_to = "src/p/_version.py"\n[tool.setuptools.packages.find]\n'
        'where = ["src"]\n',
        "src/p/__init__.py": "A = 1\n",
        "src/p/_version.py": "version = '1.5.0'\n",
        "tests/test_p.py": CODE,
    }
    head = Snapshot.of_files(files)
    profile = load_profile(head)
    assert profile.install.build_generated == ("src/p/_version.py",)
    changes = [FileChange("add", None, path, None, text.encode()) for path, text in files.items()]
    found = changed_code(changes, profile, load_judge(head).policy.sealed, PYTHON_COVERAGE, head)
    assert (dict(found.lines), dict(found.outside)) == ({"src/p/__init__.py": frozenset({1})}, {})
