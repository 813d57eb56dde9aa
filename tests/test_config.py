"""`[tool.gatetui]` and its sealing rules: parsed from base, every mistake
one line that names the key and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatetui.config import ConfigError, SealRule, SealSettings, load_seal_file, load_settings, section_keys
from gatetui.git.snapshot import Snapshot
from gatetui.stacks.registry import load_judge

TESTS = {"tests/test_a.py": "def test_a():\n    pass\n"}


def settings(toml: str):  # type: ignore[no-untyped-def]
    return load_settings(Snapshot.of_files({"gatetui.toml": toml}, sha="a" * 40))


def error(toml: str) -> str:
    with pytest.raises(ConfigError) as caught:
        settings(toml)
    message = str(caught.value)
    assert "\n" not in message
    return message


def policy(toml: str, seal: SealSettings | None = None):  # type: ignore[no-untyped-def]
    return load_judge(Snapshot.of_files({**TESTS, "pyproject.toml": toml}), seal).policy


def test_no_seal_table_means_the_default_rule_as_written() -> None:
    assert settings('stack = "python"\n').seal == SealSettings()


def test_the_simple_form_tunes_the_default_rule() -> None:
    seal = settings(
        '[seal]\npaths = ["tests/**", "pyproject.toml#tool.pytest.ini_options"]\non_change = "fail"\nallow_new = true\n'
    ).seal
    assert seal == SealSettings(
        paths=("tests/**", "pyproject.toml#tool.pytest.ini_options"), on_change="fail", allow_new=True
    )


def test_named_rules_are_read_in_order() -> None:
    seal = settings(
        '[[seal.rules]]\nname = "existing tests"\npaths = ["tests/**"]\non_change = "fail"\nallow_new = true\n'
        '[[seal.rules]]\nname = "fixtures"\npaths = ["fixtures"]\non_change = "allow"\n'
    ).seal
    assert seal.rules == (
        SealRule("existing tests", ("tests/**",), "fail", True),
        SealRule("fixtures", ("fixtures",), "allow", False),
    )
    assert (seal.rules[0].globs, seal.rules[0].sections) == (("tests/**",), ())


def test_pyproject_tool_gatetui_seal_is_read() -> None:
    snapshot = Snapshot.of_files({"pyproject.toml": '[tool.gatetui.seal]\non_change = "fail"\n'})
    assert load_settings(snapshot).seal.on_change == "fail"


@pytest.mark.parametrize(
    "toml, words",
    [
        ('[seal]\non_change = "block"\n', "seal.on_change must be 'review' or 'fail' or 'allow', not 'block'"),
        ('[seal]\nallow_new = "yes"\n', "seal.allow_new must be true or false, not 'yes'"),
        ('[seal]\npaths = "tests"\n', "seal.paths must be a list of non-empty strings, not 'tests'"),
        (
            "[seal]\nsealed = []\n",
            "unknown key seal.sealed (known: allow_new, baseline, hidden, on_change, paths, random_order, rules)",
        ),
        ('seal = "tests"\n', "seal must be a table ([tool.gatetui.seal])"),
        ('[seal]\nrules = ["tests"]\n', "seal.rules must be an array of tables ([[tool.gatetui.seal.rules]])"),
        ('[[seal.rules]]\npaths = ["a"]\n', 'seal.rules[1] needs a name (name = "existing tests")'),
        ('[[seal.rules]]\nname = "a"\n', "seal.rules[1] ('a') needs paths, a list of globs or FILE#SECTION entries"),
        ('[[seal.rules]]\nname = "a"\npaths = []\n', "seal.rules[1] ('a') needs paths"),
        (
            '[[seal.rules]]\nname = "a"\npaths = ["x"]\n[[seal.rules]]\nname = "b"\npaths = ["x"]\non_change = "x"\n',
            "seal.rules[2].on_change must be 'review' or 'fail' or 'allow', not 'x'",
        ),
        (
            '[[seal.rules]]\nname = "a"\npaths = ["x"]\nwhen = 1\n',
            "unknown key seal.rules[1].when (known: allow_new, name, on_change, paths)",
        ),
        (
            '[[seal.rules]]\nname = "a"\npaths = ["x"]\n[[seal.rules]]\nname = "a"\npaths = ["y"]\n',
            "seal rule name 'a' is used twice; give each rule its own name",
        ),
        ('[[seal.rules]]\nname = "default"\npaths = ["x"]\n', "seal rule name 'default' is the top-level rule's name"),
        (
            '[seal]\npaths = ["notes.yaml#a"]\n',
            "seal.paths entry 'notes.yaml#a' names a section of a file gatetui cannot parse",
        ),
        (
            '[seal]\npaths = ["*.toml#a"]\n',
            "seal.paths entry '*.toml#a' names a section of a file gatetui cannot parse",
        ),
        ('[seal]\npaths = ["pyproject.toml#"]\n', "seal.paths entry 'pyproject.toml#' needs a section after '#'"),
        (
            '[seal]\npaths = ["pyproject.toml#tool..pytest"]\n',
            "needs a section after '#' (like tool.pytest.ini_options)",
        ),
        ('[seal]\npaths = ["setup.cfg# "]\n', "seal.paths entry 'setup.cfg# ' needs a section after '#'"),
        (
            '[seal]\npaths = ["../x"]\n',
            "seal.paths entry '../x' must be relative to the repository's top, without '..'",
        ),
        ('[seal]\npaths = ["/etc/passwd"]\n', "seal.paths entry '/etc/passwd' must be relative"),
        ("[seal]\nrandom_order = 1\n", "seal.random_order must be true or false, not 1"),
        ('baseline = "on"\n', "baseline must be true or false, not 'on'"),
        ('[seal]\nhidden = "../secret"\n', "seal.hidden must name a folder inside the state directory's hidden/"),
        (
            'hidden = "/abs"\n',
            "hidden must name a folder inside the state directory's hidden/ (relative, no '..'), not '/abs'",
        ),
        ("baseline = true\n[seal]\nbaseline = false\n", "baseline is set both at the top and in seal; keep one"),
    ],
)
def test_bad_seal_settings_are_one_line_naming_the_key(toml: str, words: str) -> None:
    message = error(toml)
    assert message.startswith(f"gatetui.toml at base {'a' * 7}: ")
    assert words in message


def test_hidden_random_order_and_baseline_are_carried_from_either_place() -> None:
    top = settings('hidden = "leap"\nrandom_order = true\nbaseline = true\n')
    in_seal = settings('[seal]\nhidden = "leap"\nrandom_order = true\nbaseline = true\n')
    assert (top.hidden, top.random_order, top.baseline) == ("leap", True, True)
    assert (in_seal.hidden, in_seal.random_order, in_seal.baseline) == ("leap", True, True)
    assert (settings("").random_order, settings("").baseline, settings("").hidden) == (False, False, None)


@pytest.mark.parametrize(
    "section, keys",
    [
        ("tool.pytest.ini_options", ("tool", "pytest", "ini_options")),
        ('tool."a.b".c', ("tool", "a.b", "c")),
        (" scripts . test ", ("scripts", "test")),
        ("tool:pytest", ("tool:pytest",)),
        ("a..b", ()),
        (".a", ()),
        ("a.", ()),
        ('"open', ()),
    ],
)
def test_section_keys(section: str, keys: tuple[str, ...]) -> None:
    assert section_keys(section) == keys


# --- rules files for the lab ------------------------------------------------


@pytest.mark.parametrize(
    "text", ['[tool.gatetui.seal]\non_change = "fail"\n', '[seal]\non_change = "fail"\n', 'on_change = "fail"\n']
)
def test_rules_file_takes_three_forms(tmp_path: Path, text: str) -> None:
    (tmp_path / "rules.toml").write_text(text)
    assert load_seal_file(tmp_path / "rules.toml") == SealSettings(on_change="fail")


@pytest.mark.parametrize(
    "text, words",
    [
        (None, "cannot read the rules file"),
        ("on_change = \n", "is not valid TOML"),
        ('on_change = "never"\n', "rules.toml: seal.on_change must be 'review' or 'fail' or 'allow', not 'never'"),
    ],
)
def test_bad_rules_file_is_one_line(tmp_path: Path, text: str | None, words: str) -> None:
    path = tmp_path / "rules.toml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_seal_file(path)
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)


# --- rules resolved by the profile -------------------------------------------


def test_default_rule_is_the_stacks_sealed_set_with_its_sections() -> None:
    p = policy('[project]\nname = "x"\n')
    assert p.rules == (
        SealRule(
            "default",
            (
                "tests/**",
                "**/conftest.py",
                "**/test_*.py",
                "**/*_test.py",
                "pytest.ini",
                ".pytest.ini",
                "pyproject.toml#tool.pytest.ini_options",
                "setup.cfg#tool:pytest",
                "tox.ini#pytest",
            ),
        ),
    )
    assert p.sealed == ("tests/**", "**/conftest.py", "**/test_*.py", "**/*_test.py", "pytest.ini", ".pytest.ini")


def test_sealed_key_adds_to_the_default_rule_and_allow_rules_are_not_restored() -> None:
    p = policy(
        '[tool.gatetui]\nsealed = ["fixtures/**"]\n[tool.gatetui.seal]\npaths = ["tests/**"]\n'
        '[[tool.gatetui.seal.rules]]\nname = "docs"\npaths = ["docs/**"]\non_change = "allow"\n'
        '[[tool.gatetui.seal.rules]]\nname = "data"\npaths = ["data/**", "pyproject.toml#tool.x"]\n'
        'on_change = "fail"\n'
    )
    assert [(r.name, r.paths) for r in p.rules] == [
        ("default", ("tests/**", "fixtures/**")),
        ("docs", ("docs/**",)),
        ("data", ("data/**", "pyproject.toml#tool.x")),
    ]
    assert p.sealed == ("tests/**", "fixtures/**", "data/**")


def test_empty_paths_drops_the_default_rule() -> None:
    p = policy("[tool.gatetui.seal]\npaths = []\n")
    assert (p.rules, p.sealed) == ((), ())


def test_an_override_replaces_base_sealing_and_keeps_the_rest() -> None:
    toml = (
        '[tool.gatetui]\nsealed = ["fixtures/**"]\ntimeout = 60\nrandom_order = true\n'
        '[tool.gatetui.seal]\non_change = "fail"\n'
    )
    p = policy(toml, SealSettings(paths=("tests/**",), on_change="allow", baseline=True))
    assert (p.rules, p.sealed) == ((SealRule("default", ("tests/**",), "allow"),), ())
    assert (p.timeout, p.random_order, p.baseline) == (60.0, True, True)


def test_node_default_rule_seals_the_test_script() -> None:
    files = {"package.json": '{"scripts": {"test": "node --test"}}', "test/a.test.js": "test('a', () => {})\n"}
    p = load_judge(Snapshot.of_files(files)).policy
    assert p.rules[0].sections == ("package.json#scripts.test",)


def test_submit_cap_is_a_whole_number_or_absent() -> None:
    assert (settings("submit_cap = 5\n").submit_cap, settings("stack = 'python'\n").submit_cap) == (5, None)
    assert error("submit_cap = -1\n") == (
        f"gatetui.toml at base {'a' * 7}: submit_cap must be a whole number, 0 or more, not -1"
    )
    assert error("submit_cap = true\n").endswith("submit_cap must be a whole number, 0 or more, not True")


def test_mutant_cap_is_a_whole_number_twenty_when_absent() -> None:
    assert (settings("mutant_cap = 5\n").mutant_cap, settings("stack = 'python'\n").mutant_cap) == (5, 20)
    assert error("mutant_cap = -1\n").endswith("mutant_cap must be a whole number, 0 or more, not -1")
