"""Stack profiles read from base: install commands from where real projects
declare test dependencies, test commands that write JUnit, sealed sets."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatetui.errors import BadInput
from gatetui.gate.sealing.sealed import is_sealed
from gatetui.git.snapshot import Snapshot
from gatetui.stacks.node.profile import loads_config_in_place, node_test_command
from gatetui.stacks.python.extras import declared_extras, setup_cfg_extras, setup_py_extras
from gatetui.stacks.python.profile import importable_packages, scm_version
from gatetui.stacks.python.project_config import pytest_ini_text, pytest_settings
from gatetui.stacks.registry import load_judge, load_profile

TESTS = {"tests/test_a.py": "def test_a():\n    pass\n"}


def profile(files: dict[str, str]):  # type: ignore[no-untyped-def]
    return load_profile(Snapshot.of_files({**TESTS, **files}))


def policy(files: dict[str, str]):  # type: ignore[no-untyped-def]
    return load_judge(Snapshot.of_files({**TESTS, **files})).policy


def copied(resolve: str) -> tuple[list[str], list[str]]:
    """The requirement files and lines the resolve has own_requirements.py
    copy (head's own project left out) before either resolver reads them."""
    words = shlex.split(resolve.split('"$GATE_OWN_REQS" {own} "$reqs" ', 1)[1].split(" && ", 1)[0])
    return words[: words.index("--")], words[words.index("--") + 1 :]


def install_line(files: dict[str, str]) -> str:
    """The resolve: what the gate asks pip for besides the project itself
    (pip's command, where uv is missing or gives way), the copied files and
    lines named as the tree names them."""
    resolve = profile(files).install.dependencies.resolve
    pip = resolve.rsplit("it resolves from the installed project' >&2; ", 1)[-1].split("; fi", 1)[0]
    names, lines = copied(resolve)
    target, read = pip.split(' -r "$reqs/lines.txt"', 1)
    assert read == "".join(f' -r "$reqs"/{shlex.quote("tree/" + name)}' for name in names)
    command, own = target.rsplit(" ", 1)  # pip starts from the stub first, as uv does
    assert resolve.rsplit('if [ -n "$stub" ] && ', 1)[-1].split("; then", 1)[0] == (
        f'{command} "{shlex.split(own)[0]} @ file://$stub" -r "$reqs/lines.txt"{read}'
    )
    return (
        target
        + "".join(f" -r {shlex.quote(name)}" for name in names)
        + "".join(f" {shlex.quote(line)}" for line in lines)
    )


def uv_lines(files: dict[str, str]) -> str:
    """What uv's resolve is given: the lines on its stdin and the files."""
    resolve = profile(files).install.dependencies.resolve
    return resolve.split("printf '%s\\n' ", 1)[1].split(" > {report}", 1)[0]


def test_uv_resolves_the_same_set_from_the_installed_metadata() -> None:
    """uv starts from head's installed project packed as a metadata wheel
    ($stub), with pip's other lines and requirement files as
    own_requirements.py copied them."""
    files = {
        "pyproject.toml": '[project]\nname="x"\n[project.optional-dependencies]\ntest=["coverage"]\n',
        "requirements-test.txt": "hypothesis\n",
    }
    line = uv_lines(files)
    assert line.startswith('"{own}[test] @ file://$stub" | ')
    assert line.endswith(' --format pylock.toml - "$reqs/lines.txt" "$reqs"/tree/requirements-test.txt')
    assert copied(profile(files).install.dependencies.resolve) == (["requirements-test.txt"], ["pytest"])


def test_python_extra_named_test_is_installed() -> None:
    line = install_line(
        {"pyproject.toml": '[project]\nname="x"\n[project.optional-dependencies]\ntest=["pytest>=8"]\n'}
    )
    assert line.endswith("'{own}[test]'")


def test_a_test_extra_that_names_the_runner_leaves_dev_out() -> None:
    """dev pulls in linters, type checkers and doc builders no test needs
    (one project's dev group cost more than its whole suite)."""
    line = install_line(
        {
            "pyproject.toml": '[project]\nname="x"\n[project.optional-dependencies]\ndev=["ruff"]\n'
            'testing=["pytest"]\ntest=["hypothesis"]\n'
        }
    )
    assert line.endswith("'{own}[test,testing]'")


def test_dev_joins_when_the_test_extras_do_not_name_the_runner() -> None:
    line = install_line(
        {
            "pyproject.toml": '[project]\nname="x"\n[project.optional-dependencies]\ndev=["pytest"]\n'
            'testing=["hypothesis"]\n'
        }
    )
    assert line.endswith("'{own}[testing,dev]'")


def test_dependency_groups_follow_the_same_rule() -> None:
    groups = (
        '[dependency-groups]\ntest=["pytest>=8", {include-group = "base"}]\nbase=["attrs"]\ndev=["mypy", "sphinx"]\n'
    )
    line = install_line({"pyproject.toml": '[project]\nname="x"\n' + groups})
    assert "mypy" not in line and "sphinx" not in line
    assert line.endswith("'{own}' 'pytest>=8' attrs")


def test_pytest_is_added_when_nothing_declares_it() -> None:
    assert install_line({"setup.py": "from setuptools import setup\nsetup()\n"}).endswith("'{own}' pytest")


def test_requirements_test_file_is_used() -> None:
    line = install_line({"setup.py": "", "requirements-test.txt": "pytest==8.3.0\nhypothesis\n"})
    assert line.endswith("'{own}' -r requirements-test.txt")


def test_dependency_group_is_expanded_with_includes() -> None:
    line = install_line(
        {
            "pyproject.toml": (
                '[project]\nname="x"\n[dependency-groups]\nlint=["ruff"]\ntest=["pytest", {include-group = "lint"}]\n'
            )
        }
    )
    assert line.endswith("'{own}' pytest ruff")


def test_tox_deps_are_installed() -> None:
    line = install_line({"setup.py": "", "tox.ini": "[testenv]\ndeps =\n    pytest\n    freezegun\n    {posargs}\n"})
    assert line.endswith("'{own}' pytest freezegun")


def test_install_starts_with_a_fresh_venv() -> None:
    assert profile({"setup.py": ""}).install.commands[0] == "python3 -m venv --without-pip .venv"


def test_configured_commands_win(tmp_path) -> None:  # type: ignore[no-untyped-def]
    files = {"gatetui.toml": 'install = ["make deps"]\ntest = "make check"\ntimeout = 60\n', "setup.py": ""}
    p = profile(files)
    assert (p.install.commands, p.suite.command, policy(files).timeout, p.suite.runner) == (
        ("make deps",),
        "make check",
        60.0,
        "custom",
    )


def test_pytest_test_paths_come_from_testpaths() -> None:
    files = {"pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests", "more"]\n'}
    assert profile(files).suite.paths == ("tests", "more")
    # `tests` is a folder of tests, sealed whole; `more` may hold library code beside its tests
    assert policy(files).sealed == (
        "tests/**",
        "more/**/test_*.py",
        "more/**/*_test.py",
        "more/**/tests/**",
        "more/**/test/**",
        "**/conftest.py",
        "**/test_*.py",
        "**/*_test.py",
        "pytest.ini",
        ".pytest.ini",
    )


def test_no_tests_at_base_is_bad_input() -> None:
    with pytest.raises(BadInput, match="no tests found at base"):
        load_profile(Snapshot.of_files({"setup.py": "", "pkg/__init__.py": ""}))


@pytest.mark.parametrize(
    ("lock", "in_place"),
    [
        ('{"packages": {"node_modules/vitest": {"version": "3.2.4"}}}', True),
        ('{"packages": {"node_modules/vitest": {"version": "4.0.0-beta.1"}}}', True),
        ('{"packages": {"node_modules/vitest": {"version": "3.0.9"}}}', False),
        ('{"packages": {"node_modules/vitest": {"version": "x"}}}', False),
        ('{"packages": []}', False),
        ("not json", False),
    ],
)
def test_vitest_from_3_1_loads_its_config_without_writing_it(lock: str, in_place: bool) -> None:
    base = Snapshot.of_files({"package.json": '{"scripts": {"test": "vitest"}}', "package-lock.json": lock})
    assert loads_config_in_place(base) is in_place
    assert ("--configLoader runner" in node_test_command("vitest", None, in_place)[1]) is in_place


def test_vitest_script_gets_a_junit_reporter() -> None:
    runner, command = node_test_command("vitest run --dir tests", None)
    assert runner == "vitest"
    assert (
        command
        == "node_modules/.bin/vitest run --dir tests --reporter=default --reporter=junit --outputFile.junit={report}"
    )


def test_node_test_script_gets_a_junit_reporter_before_its_files() -> None:
    runner, command = node_test_command("node --test test/", None)
    assert runner == "node"
    assert command.endswith("--test-reporter=junit --test-reporter-destination={report} test/")


def test_unknown_node_runner_is_bad_input() -> None:
    with pytest.raises(BadInput, match="runs neither vitest nor node --test"):
        node_test_command("jest", None)


def test_pytest_settings_from_pyproject_become_an_ini() -> None:
    base = Snapshot.of_files(
        {"pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\naddopts = "-q"\nxfail_strict = true\n'}
    )
    assert (
        pytest_ini_text(pytest_settings(base))
        == "[pytest]\ntestpaths = \n    tests\naddopts = -q\nxfail_strict = true\n"
    )


def test_pytest_ini_wins_over_pyproject_like_pytest_does() -> None:
    base = Snapshot.of_files(
        {"pytest.ini": "[pytest]\naddopts = -x\n", "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-q"\n'}
    )
    assert pytest_settings(base) == {"addopts": "-x"}


def test_importable_packages_flat_and_src_layouts() -> None:
    paths = (
        "calc/__init__.py",
        "src/other/__init__.py",
        "tests/__init__.py",
        "calc/sub/__init__.py",
        "docs/__init__.py",
    )
    assert importable_packages(paths) == ["calc", "other"]


def test_tests_inside_the_package_are_sealed() -> None:
    judge = load_judge(
        Snapshot.of_files({"setup.py": "", "pkg/__init__.py": "", "pkg/tests/test_x.py": "def test_x(): pass\n"})
    )
    assert judge.profile.suite.paths == (".",)
    assert judge.policy.sealed == (
        "**/test_*.py",
        "**/*_test.py",
        "**/tests/**",
        "**/test/**",
        "**/conftest.py",
        "pytest.ini",
        ".pytest.ini",
    )


@pytest.mark.parametrize(
    ("testpaths", "sealed", "library"),
    [
        (
            '["pkg"]',
            ["pkg/tests/test_core.py", "pkg/tests/helpers.py", "pkg/test_fast.py", "pkg/conftest.py"],
            ["pkg/core.py", "pkg/__init__.py", "pkg/testing.py"],
        ),
        ('["src"]', ["src/pkg/tests/test_core.py", "src/pkg/core_test.py"], ["src/pkg/core.py"]),
        ('["tests", "integration_tests"]', ["tests/helpers.py", "integration_tests/data/a.json"], ["pkg/core.py"]),
    ],
)
def test_what_is_sealed_is_tests_never_a_library_module(testpaths: str, sealed: list[str], library: list[str]) -> None:
    """The package that keeps its tests inside it: sealing the whole test
    path put base's library back for old tests, which then judged base's
    code. Test modules, their folders and conftest.py are sealed; the
    library beside them is not, and is no test file either."""
    files = {path: "" for path in [*sealed, *library]}
    files = {"pyproject.toml": f"[tool.pytest.ini_options]\ntestpaths = {testpaths}\n", **files}
    p, restored = profile(files), policy(files).sealed
    assert [path for path in [*sealed, *library] if is_sealed(path, restored)] == sealed
    assert [path for path in library if p.is_test_file(path)] == []


def test_pytest_python_files_name_the_test_modules() -> None:
    sealed = policy(
        {
            "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["pkg"]\npython_files = "check_*.py"\n',
            "pkg/check_core.py": "",
            "pkg/core.py": "",
        }
    ).sealed
    assert (is_sealed("pkg/check_core.py", sealed), is_sealed("pkg/core.py", sealed)) == (True, False)


def test_tox_factor_conditional_deps_are_left_to_tox() -> None:
    line = install_line(
        {"setup.py": "", "tox.ini": "[testenv]\ndeps =\n    pytest\n    coverage: coverage\n    py3-!win: trio\n"}
    )
    assert line.endswith("'{own}' pytest")


def test_test_requirements_named_the_other_way_round() -> None:
    assert install_line({"setup.py": "", "test-requirements.txt": "pytest\n"}).endswith(
        "'{own}' -r test-requirements.txt"
    )


def test_multiline_ini_values_stay_indented() -> None:
    base = Snapshot.of_files({"tox.ini": "[pytest]\nfilterwarnings =\n    error\n    ignore::DeprecationWarning\n"})
    assert pytest_ini_text(pytest_settings(base)) == (
        "[pytest]\nfilterwarnings = \n    error\n    ignore::DeprecationWarning\n"
    )


def test_scm_versioned_builds_get_a_version_without_git() -> None:
    p = profile({"pyproject.toml": '[build-system]\nrequires = ["setuptools", "setuptools_scm>=8"]\n'})
    assert p.install.env == {"SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0", "PDM_BUILD_SCM_VERSION": "0.0.0"}
    assert profile({"setup.py": ""}).install.env == {}


def test_scm_version_follows_the_nearest_tag() -> None:
    assert [scm_version(t) for t in ("v1.5.0", "2.0", "release-x", None)] == [
        "1.5.0.post0",
        "2.0.post0",
        "0.0.0",
        "0.0.0",
    ]


# --- extras declared by setuptools outside pyproject.toml ---------------------------


def test_setup_cfg_extras_require_is_installed() -> None:
    cfg = "[metadata]\nname = x\n\n[options.extras_require]\ntest =\n    pytest>=8\n    hypothesis  # props\n"
    assert install_line({"setup.cfg": cfg}).endswith("'{own}[test]'")  # pytest declared: not added again


def test_setup_py_literal_extras_require_is_installed() -> None:
    setup = (
        "from setuptools import setup\nsetup(name='x', extras_require={'testing': ['pytest'], 'docs': ['sphinx']})\n"
    )
    assert install_line({"setup.py": setup}).endswith("'{own}[testing]'")


def test_setup_py_extras_bound_to_a_name_are_installed() -> None:
    setup = (
        "from setuptools import setup\nEXTRAS = {'tests': ['pytest', 'mock']}\nsetup(name='x', extras_require=EXTRAS)\n"
    )
    assert install_line({"setup.py": setup}).endswith("'{own}[tests]'")


def test_setup_py_computed_extras_are_not_run_and_pytest_is_added() -> None:
    setup = "from setuptools import setup\nsetup(name='x', extras_require=__import__('os').system('false'))\n"
    assert install_line({"setup.py": setup}).endswith("'{own}' pytest")


def test_pyproject_extras_win_over_setup_cfg() -> None:
    files = {
        "pyproject.toml": '[project]\nname="x"\n[project.optional-dependencies]\ndev=["pytest"]\n',
        "setup.cfg": "[options.extras_require]\ntest = pytest\n",
    }
    assert declared_extras(Snapshot.of_files(files), {"optional-dependencies": {"dev": ["pytest"]}}) == {
        "dev": ["pytest"],
        "test": ["pytest"],
    }
    assert install_line(files).endswith("'{own}[test]'")  # test names pytest: dev is not needed


def test_one_line_comma_lists_in_setup_cfg() -> None:
    assert setup_cfg_extras("[options.extras_require]\ntest = pytest, pytest-cov\n") == {
        "test": ["pytest", "pytest-cov"]
    }


@given(st.text(max_size=300))
def test_any_setup_cfg_or_setup_py_text_gives_a_mapping_of_lists(text: str) -> None:
    for found in (
        setup_cfg_extras(text),
        setup_py_extras(text),
        setup_cfg_extras("[options.extras_require]\n" + text),
        setup_py_extras("setup(extras_require={" + text + "})"),
    ):
        assert {
            k: v
            for k, v in found.items()
            if not (isinstance(k, str) and isinstance(v, list) and all(isinstance(r, str) for r in v))
        } == {}
