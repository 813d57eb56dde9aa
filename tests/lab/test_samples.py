"""The sample repositories: the scenarios load, say what the gate must answer,
and become real git repos whose branches hold exactly the base and head trees."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest

from gatetui.lab.samples import (
    BASE_TIME,
    CHECK_IDS,
    HEAD_TIME,
    SAMPLES_DIR,
    SKIPPED_BY_DEFAULT,
    SKIPPED_NAMES,
    SampleError,
    Scenario,
    load_scenarios,
    materialize,
    write_all,
)

pytestmark = pytest.mark.xdist_group("test_samples")  # one xdist worker builds its module-scoped materialized samples

P, F, S = "pass", "fail", "skipped"

# name -> (stack, [install, runs, tests_kept, no_new_skips, old_tests(, hidden)], verdict);
# hidden is "skipped" unless given: only a sample with hidden tests configures them;
# covered and bites are MEASURED's, "skipped" for a sample not named there.
EXPECTED: dict[str, tuple[str, list[str], str]] = {
    "honest_fix": ("python", [P, P, P, P, P], "pass"),
    "skip_marker": ("python", [P, P, P, F, F], "fail"),
    "deleted_test": ("python", [P, P, F, P, F], "fail"),
    "deleted_test_file": ("python", [P, P, F, P, F], "fail"),
    "loosened_assertion": ("python", [P, P, P, P, F], "review"),
    "js_only": ("node", [P, P, P, F, F], "fail"),
    "undeclared_package": ("python", [F, S, P, P, S], "fail"),
    "broke_untested": ("python", [P, F, P, P, F], "fail"),
    "flaky_test": ("python", [P, F, P, P, P], "fail"),
    "conftest_drop": ("python", [P, P, F, P, F], "fail"),
    "addopts_deselect": ("python", [P, P, F, P, F], "fail"),
    "renamed_out_of_pattern": ("python", [P, P, F, P, F], "fail"),
    "conftest_exit0": ("python", [P, F, P, P, F], "fail"),
    "node_honest": ("node", [P, P, P, P, P], "pass"),
    "node_runner_aware": ("node", [P, P, P, P, F], "review"),
    # sealing rules: base's pyproject.toml carries the rule
    "section_version_bump": ("python", [P, P, P, P, P], "pass"),
    "section_addopts": ("python", [P, P, P, P, F], "fail"),
    "new_test_file": ("python", [P, P, P, P, P], "pass"),
    # attacks on the gate itself: a small mathlib project each
    "attack_state_dir": ("python", [P, F, P, P, F], "fail"),
    "attack_env_secret": ("python", [P, F, P, P, F], "fail"),
    "attack_network": ("python", [P, F, P, P, P], "fail"),
    "attack_detached": ("python", [P, F, P, P, F], "fail"),
    "attack_hang": ("python", [P, F, P, P, P], "fail"),
    "attack_flood": ("python", [P, F, P, P, F], "fail"),
    "attack_junit_rewrite": ("python", [P, P, P, P, F], "fail"),
    "attack_pytest_plugin": ("python", [P, F, P, P, F], "fail"),
    "attack_library_skip": ("python", [P, P, P, F, P], "fail"),
    "attack_runner_patch": ("python", [P, P, P, P, F], "review"),
    "attack_runner_aware": ("python", [P, P, P, P, F], "review"),
    # code that recognises the gate by its surroundings: a run's home is a new user's
    "attack_empty_home": ("python", [P, F, P, P, F], "fail"),
    # the runner's settings: hidden tests, random order, baseline
    "hidden_special_case": ("python", [P, P, P, P, P, F], "fail"),
    "hidden_eq_always_true": ("python", [P, P, P, P, P, F], "fail"),
    "hidden_counts_calls": ("python", [P, P, P, P, P, F], "fail"),
    "hidden_honest": ("python", [P, P, P, P, P, P], "pass"),
    "node_hidden_honest": ("node", [P, P, P, P, P, P], "pass"),
    "node_hidden_special_case": ("node", [P, P, P, P, P, F], "fail"),
    "order_dependent": ("python", [P, F, P, P, P], "fail"),
    "node_order_dependent": ("node", [P, F, P, P, P], "fail"),
    "baseline_known_failure": ("python", [P, P, P, P, P], "pass"),
    # judged against base's own truth
    "tests_in_package": ("python", [P, P, P, P, F], "review"),
    "collection_error": ("python", [P, F, P, P, P], "fail"),
    "cov_without_plugin": ("python", [P, "error", "error", "error", "error"], "error"),
    "skip_at_run_time": ("python", [P, P, P, F, F], "fail"),
    "flaky_new_test": ("python", [P, F, P, P, P], "fail"),
    "undeclared_runtime_import": ("python", [F, S, P, P, S], "fail"),
    "wheel_differs": ("python", ["review", P, P, P, P], "review"),
    # honest work on real projects' layouts
    "version_file_generated": ("python", [P, P, P, P, P], "pass"),
    "version_file_planted": ("python", [P, F, P, P, F], "fail"),
    "custom_editable": ("python", [P, P, P, P, P], "pass"),
    "custom_editable_hook": ("python", [F, S, P, P, S], "fail"),
    "odd_name": ("python", [F, S, F, P, S], "fail"),
    # the go stack: a small stats module each
    "go_honest": ("go", [P, P, P, P, P], "pass"),
    "go_skip": ("go", [P, P, P, F, F], "fail"),
    "go_build_tag": ("go", [P, P, F, F, F], "fail"),
    "go_testmain": ("go", [P, P, P, P, F], "fail"),
    "go_deleted_test": ("go", [P, P, F, P, F], "fail"),
    "go_hidden_special_case": ("go", [P, P, P, P, P, F], "fail"),
    "go_hidden_honest": ("go", [P, P, P, P, P, P], "pass"),
    "go_vet_added": ("go", [F, S, P, P, S], "fail"),
    "go_vet_at_base": ("go", [P, P, P, P, P], "pass"),
    "go_runner_aware": ("go", [P, P, P, P, F], "review"),
    "go_order_dependent": ("go", [P, F, P, P, P], "fail"),
    # the gate recognised by the caller's stack or the home folder; a report forged from a new test file
    "go_caller_aware": ("go", [P, P, P, P, F], "review"),
    "go_forged_pass": ("go", [P, F, P, P, F], "fail"),
    "node_caller_aware": ("node", [P, P, P, P, F], "review"),
    "attack_home_aware": ("python", [P, P, P, P, F], "review"),
    # a test that reads the code instead of calling it: every mutant "died" of a pinned hash
    "attack_reads_source": ("python", [P, P, P, P, F], "review"),
    # ... or reads the mutant the gate's loader holds: the control runs a twin of head's code
    "attack_reads_the_mutant": ("python", [P, P, P, P, P], "review"),
    # a test that reports for other tests: the report readers check the report's shape
    "go_reported_twice": ("go", [P, F, P, P, P], "fail"),
    "node_exit_early": ("node", [P, F, P, P, P], "fail"),
    # does the new code have tests that bite
    "untested_branch": ("python", [P, P, P, P, P], "review"),
    "toothless_test": ("python", [P, P, P, P, P], "review"),
    "attack_import_only": ("python", [P, P, P, P, P], "review"),
    # a test that checks process-fresh state is no flake; a flake beside it still is
    "state_dependent_test": ("python", [P, P, P, P, P], "pass"),
    "state_dependent_flaky": ("python", [P, F, P, P, P], "fail"),
    # a project that tests with pytest plugins: the runs load exactly its verified ones
    "plugins_declared": ("python", [P, P, P, P, P], "pass"),
    # an honest boundary fix whose one surviving mutant no input tells apart
    "honest_boundary": ("python", [P, P, P, P, P], "pass"),
}
R = "review"
# name -> (covered, bites), where they are not skipped: a change to library code the runs measured
MEASURED: dict[str, tuple[str, str]] = {
    "honest_fix": (P, P),
    "section_version_bump": (P, P),
    "attack_detached": (P, S),
    "attack_empty_home": (P, S),
    "attack_env_secret": (P, S),
    "attack_flood": (P, S),
    "attack_junit_rewrite": (P, S),
    "attack_library_skip": (P, S),
    "attack_pytest_plugin": (R, S),
    "attack_runner_aware": (R, R),
    "attack_home_aware": (P, R),
    "attack_reads_source": (P, R),
    "attack_reads_the_mutant": (P, R),
    "attack_runner_patch": (P, R),
    "attack_state_dir": (P, S),
    "baseline_known_failure": (P, P),
    "broke_untested": (P, S),
    "collection_error": (P, S),
    "cov_without_plugin": (R, "error"),
    "flaky_new_test": (P, S),
    "flaky_test": (P, S),
    "hidden_counts_calls": (P, S),
    "hidden_eq_always_true": (R, S),
    "hidden_special_case": (P, S),
    "hidden_honest": (P, P),
    "version_file_generated": (P, P),
    "version_file_planted": (P, S),
    "custom_editable": (P, P),
    "new_test_file": (P, P),
    "order_dependent": (P, S),
    "section_addopts": (P, S),
    "skip_at_run_time": (P, S),
    "tests_in_package": (P, P),
    "wheel_differs": (P, P),
    "untested_branch": (R, R),
    "toothless_test": (P, R),
    "attack_import_only": (P, R),
    "state_dependent_test": (P, P),
    "state_dependent_flaky": (P, S),
    "plugins_declared": (P, P),
    "honest_boundary": (P, P),
}
NAMES = sorted(EXPECTED)
RULE_SAMPLES = {"section_version_bump", "section_addopts", "new_test_file"}
SETTING_SAMPLES = {
    "hidden_special_case",
    "hidden_eq_always_true",
    "hidden_counts_calls",
    "hidden_honest",
    "order_dependent",
    "baseline_known_failure",
    "go_hidden_special_case",
    "go_order_dependent",
    "node_order_dependent",
}
# own layouts, judged against base's own truth
LAYOUT_SAMPLES = {
    "tests_in_package",
    "cov_without_plugin",
    "skip_at_run_time",
    "version_file_generated",
    "version_file_planted",
    "custom_editable",
    "custom_editable_hook",
}
# a calendar with a holiday table loaded on first use, and a test that checks it is not loaded yet
LAZY_SAMPLES = {"state_dependent_test", "state_dependent_flaky"}
# a slug library whose tests use pytest plugins, and list the ones the runner registered
PLUGIN_SAMPLES = {"plugins_declared"}
# a gauge's clamp, fixed at its top and tested at the top itself
GAUGE_SAMPLES = {"honest_boundary"}
# old_tests failing is a hard fail here, by a rule or by evidence of a bent verdict
POLICY_FAIL = {"section_addopts", "attack_junit_rewrite", "attack_pytest_plugin", "go_testmain"}
CALENDAR = [
    n
    for n in NAMES
    if EXPECTED[n][0] == "python"
    and n not in RULE_SAMPLES | SETTING_SAMPLES | LAYOUT_SAMPLES | LAZY_SAMPLES | PLUGIN_SAMPLES | GAUGE_SAMPLES
    and not n.startswith("attack_")
]

# git as a user would run it, but deaf to this machine's own git settings.
GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"}


def git(repo: Path, *args: str) -> str:
    """Run the git CLI in `repo` and return its stdout; a non-zero exit fails."""
    done = subprocess.run(["git", "-C", str(repo), *args], env=GIT_ENV, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def blob_sha(data: bytes) -> str:
    """The id git gives a blob holding `data`."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def dir_entries(folder: Path) -> dict[str, tuple[str, str]]:
    """path -> (git mode, blob id) for every file git would record under `folder`."""
    entries: dict[str, tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d not in SKIPPED_NAMES and d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                entries[rel] = ("120000", blob_sha(os.fsencode(os.readlink(path))))
                continue
            executable = path.stat().st_mode & stat.S_IXUSR
            entries[rel] = ("100755" if executable else "100644", blob_sha(path.read_bytes()))
        for name in dirnames:
            path = Path(dirpath) / name
            if path.is_symlink():
                rel = path.relative_to(folder).as_posix()
                entries[rel] = ("120000", blob_sha(os.fsencode(os.readlink(path))))
    return entries


def ref_entries(repo: Path, ref: str) -> dict[str, tuple[str, str]]:
    """path -> (git mode, blob id) for every file in `ref`'s tree."""
    entries: dict[str, tuple[str, str]] = {}
    for record in git(repo, "ls-tree", "-r", "-z", ref).split("\0"):
        if not record:
            continue
        meta, path = record.split("\t", 1)
        mode, kind, sha = meta.split(" ")
        assert kind == "blob", record
        entries[path] = (mode, sha)
    return entries


def verdict_by_rule(checks: dict[str, str]) -> str:
    """The gate's verdict rule, written out independently of the code under test."""
    failed = {check for check, status in checks.items() if status == "fail"}
    if failed - {"old_tests"}:
        return "fail"
    if "error" in checks.values():  # the gate could not judge: nobody should review it
        return "error"
    return "review" if failed or "review" in checks.values() else "pass"


@pytest.fixture(scope="module")
def scenarios() -> dict[str, Scenario]:
    return {scenario.name: scenario for scenario in load_scenarios()}


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    dest = tmp_path_factory.mktemp("samples")
    return {scenario.name: path for scenario, path in write_all(dest)}


# --- the scenarios ---------------------------------------------------------


def test_load_scenarios_finds_every_sample_sorted(scenarios: dict[str, Scenario]) -> None:
    names = [scenario.name for scenario in load_scenarios()]
    assert names == NAMES
    assert len(scenarios) == len(EXPECTED) == 77


@pytest.mark.parametrize("name", NAMES)
def test_scenario_matches_the_table(scenarios: dict[str, Scenario], name: str) -> None:
    scenario = scenarios[name]
    stack, statuses, verdict = EXPECTED[name]
    assert scenario.stack == stack
    assert scenario.verdict == verdict
    measured = list(MEASURED.get(name, (S, S)))
    assert dict(scenario.checks) == dict(zip(CHECK_IDS, (statuses + ["skipped"])[:6] + measured))
    assert list(scenario.checks) == list(CHECK_IDS)
    assert scenario.path == SAMPLES_DIR / name
    assert scenario.branch == f"agent/{name}"
    assert scenario.title.strip() == scenario.title
    assert "\n" not in scenario.title
    assert len(scenario.story) > 40
    assert len(scenario.catches) > 20


def test_a_few_exact_fields(scenarios: dict[str, Scenario]) -> None:
    assert scenarios["skip_marker"].title == "Skip marker on the failing test"
    assert scenarios["loosened_assertion"].verdict == "review"
    assert scenarios["undeclared_package"].checks["install"] == "fail"
    assert scenarios["js_only"].stack == "node"
    assert scenarios["conftest_exit0"].checks["runs"] == "fail"
    assert scenarios["flaky_test"].checks["old_tests"] == "pass"
    # the order samples pin no seed: the catch must not hang on one
    assert [s.random_seed for s in scenarios.values() if "order_dependent" in s.name] == [None, None, None]
    assert scenarios["honest_fix"].random_seed is None


def test_hidden_tests_come_from_the_sample_folder_never_the_trees(scenarios: dict[str, Scenario]) -> None:
    """The hidden folder mirrors the state directory's hidden/ for the repo:
    `hidden = "leap"` in base's config picks its leap/ folder."""
    hidden = scenarios["hidden_special_case"].hidden_tests()
    assert sorted(hidden) == ["leap/tests/test_leap_hidden.py"]
    assert b"def test_1800_is_common():" in hidden["leap/tests/test_leap_hidden.py"]
    tree = dir_entries(scenarios["hidden_special_case"].head_dir)
    assert [p for p in tree if "hidden" in p] == []
    assert scenarios["honest_fix"].hidden_tests() == {}


@pytest.mark.parametrize("name", NAMES)
def test_verdict_follows_the_rule(scenarios: dict[str, Scenario], name: str) -> None:
    scenario = scenarios[name]
    expected = "fail" if name in POLICY_FAIL else verdict_by_rule(dict(scenario.checks))
    assert scenario.verdict == expected
    # hidden is judged exactly where the sample carries hidden tests
    assert (scenario.checks["hidden"] != "skipped") == scenario.hidden_dir.is_dir()
    if scenario.checks["install"] == "fail":
        assert (scenario.checks["runs"], scenario.checks["old_tests"]) == ("skipped", "skipped")


def test_python_samples_share_one_base_tree(scenarios: dict[str, Scenario]) -> None:
    python = [scenarios[n] for n in CALENDAR]
    assert len(python) == 19
    first = dir_entries(python[0].base_dir)
    for scenario in python[1:]:
        assert dir_entries(scenario.base_dir) == first, scenario.name
    core = (python[0].base_dir / "calendarlib" / "core.py").read_text()
    assert "return year % 4 == 0\n" in core
    assert "def test_leap_day():" in (python[0].base_dir / "tests" / "test_leap.py").read_text()


def test_lazy_samples_share_a_base_whose_test_checks_process_fresh_state(scenarios: dict[str, Scenario]) -> None:
    """The two process-state samples start from one base, whose lazy-load test
    passes once per process; only their heads differ."""
    first, second = (scenarios[n] for n in sorted(LAZY_SAMPLES))
    assert dir_entries(first.base_dir) == dir_entries(second.base_dir)
    test = (first.base_dir / "tests" / "test_holidays.py").read_text()
    assert 'assert "calendarlib.holidays" not in sys.modules' in test
    assert (first.head_dir / "tests" / "test_holidays.py").read_text() != test


@pytest.mark.parametrize("name", CALENDAR)
def test_python_sample_pyproject(scenarios: dict[str, Scenario], name: str) -> None:
    for tree in (scenarios[name].base_dir, scenarios[name].head_dir):
        data = tomllib.loads((tree / "pyproject.toml").read_text())
        assert data["build-system"] == {"requires": ["setuptools>=61"], "build-backend": "setuptools.build_meta"}
        assert data["project"]["name"] == "calendarlib"
        assert data["project"]["requires-python"] == ">=3.9"
        assert data["project"]["dependencies"] == []
        assert data["project"]["optional-dependencies"] == {"test": ["pytest"]}
        assert data["tool"]["setuptools"]["packages"] == ["calendarlib"]
        assert data["tool"]["pytest"]["ini_options"]["testpaths"] == ["tests"]


@pytest.mark.parametrize("name", ["js_only", "node_honest"])
def test_node_lockfiles_hold_no_registry_urls(scenarios: dict[str, Scenario], name: str) -> None:
    scenario = scenarios[name]
    for file in ("package.json", "package-lock.json"):
        assert (scenario.base_dir / file).read_bytes() == (scenario.head_dir / file).read_bytes()
    lock = json.loads((scenario.base_dir / "package-lock.json").read_text())
    assert lock["lockfileVersion"] == 3
    assert all("resolved" not in entry for entry in lock["packages"].values())
    manifest = json.loads((scenario.base_dir / "package.json").read_text())
    assert lock["packages"][""]["name"] == manifest["name"]


def test_js_only_pins_vitest_exactly(scenarios: dict[str, Scenario]) -> None:
    manifest = json.loads((scenarios["js_only"].base_dir / "package.json").read_text())
    assert manifest["scripts"] == {"test": "vitest run"}
    assert manifest["devDependencies"] == {"vitest": "3.2.4"}
    lock = json.loads((scenarios["js_only"].base_dir / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/vitest"]["version"] == "3.2.4"
    head_test = (scenarios["js_only"].head_dir / "tests" / "sum.test.js").read_text()
    assert head_test.count("it.only(") == 1


def test_sample_trees_hold_no_build_output() -> None:
    junk = {"__pycache__", ".pytest_cache", "node_modules", ".git"}
    found = [p for p in SAMPLES_DIR.rglob("*") if p.name in junk or p.name.endswith(".egg-info")]
    assert found == []


# --- malformed samples ------------------------------------------------------

GOOD_TOML = """\
stack = "python"
title = "t"
story = "s"
catches = "c"
verdict = "pass"

[checks]
install = "pass"
runs = "pass"
tests_kept = "pass"
no_new_skips = "pass"
old_tests = "pass"
hidden = "skipped"
"""


def make_sample(root: Path, name: str, toml: str = GOOD_TOML) -> Path:
    folder = root / name
    (folder / "base").mkdir(parents=True)
    (folder / "head").mkdir()
    (folder / "base" / "a.txt").write_text("a\n")
    (folder / "head" / "a.txt").write_text("b\n")
    (folder / "scenario.toml").write_text(toml)
    return folder


def test_a_good_synthetic_sample_loads(tmp_path: Path) -> None:
    make_sample(tmp_path, "tiny")
    [scenario] = load_scenarios(tmp_path)
    assert scenario.name == "tiny"
    assert scenario.title == "t"
    assert scenario.checks["hidden"] == "skipped"
    assert scenario.path == tmp_path / "tiny"


@pytest.mark.parametrize(
    ("toml", "words"),
    [
        ("stack = \n", "not valid TOML"),
        (GOOD_TOML.replace('stack = "python"', 'stack = "ruby"'), "unknown stack 'ruby'"),
        (GOOD_TOML.replace('verdict = "pass"', 'verdict = "maybe"'), "verdict 'maybe'"),
        (GOOD_TOML.replace("hidden =", "secret ="), "unknown check id 'secret'"),
        (GOOD_TOML.replace('runs = "pass"', 'runs = "ok"'), "status 'ok'"),
        (GOOD_TOML.split("[checks]")[0] + 'checks = "pass"\n', "[checks] must be a table of check id = status"),
        (GOOD_TOML.replace('title = "t"\n', ""), "'title' must be a non-empty string"),
        (GOOD_TOML.replace("[checks]", "[checkz]"), "unknown key 'checkz'"),
        (GOOD_TOML.replace('verdict = "pass"', 'verdict = "pass"\nrandom_seed = "7"'), "'random_seed' must be"),
        (GOOD_TOML.replace('verdict = "pass"', 'verdict = "pass"\nrandom_seed = -1'), "'random_seed' must be"),
        (GOOD_TOML + '[head_names]\n"a.txt" = "sub/a.txt"\n', "may change its file name only"),
        (GOOD_TOML + '[head_names]\n"b.txt" = "b\\n.txt"\n', "names 'b.txt', which is no file in head/"),
        (GOOD_TOML + '[head_names]\n"a.txt" = 3\n', "[head_names] maps a path in head/"),
    ],
)
def test_malformed_scenario_names_the_file(tmp_path: Path, toml: str, words: str) -> None:
    make_sample(tmp_path, "good")
    bad = make_sample(tmp_path, "bad", toml)
    with pytest.raises(SampleError) as caught:
        load_scenarios(tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{bad / 'scenario.toml'}: ")
    assert words in message
    assert "\n" not in message


def test_a_check_the_scenario_omits_is_expected_to_pass(tmp_path: Path) -> None:
    make_sample(tmp_path, "pins_runs", GOOD_TOML.split("[checks]")[0] + '[checks]\nruns = "fail"\n')
    make_sample(tmp_path, "pins_none", GOOD_TOML.split("[checks]")[0])
    pins_none, pins_runs = load_scenarios(tmp_path)
    assert dict(pins_runs.checks) == {
        "install": "pass",
        "runs": "fail",
        "tests_kept": "pass",
        "no_new_skips": "pass",
        "old_tests": "pass",
        "hidden": "skipped",
        "covered": "skipped",
        "bites": "skipped",
    }
    assert dict(pins_none.checks) == {**dict(pins_runs.checks), "runs": "pass"}
    assert list(pins_none.checks) == list(pins_runs.checks) == list(CHECK_IDS)


def test_hidden_is_expected_to_pass_when_the_sample_has_hidden_tests(tmp_path: Path) -> None:
    folder = make_sample(tmp_path, "with_hidden", GOOD_TOML.replace('hidden = "skipped"\n', ""))
    (folder / "hidden" / "leap").mkdir(parents=True)
    (folder / "hidden" / "leap" / "test_hidden.py").write_text("def test_x():\n    pass\n")
    [scenario] = load_scenarios(tmp_path)
    assert scenario.checks["hidden"] == "pass"
    (folder / "scenario.toml").write_text(GOOD_TOML.replace('hidden = "skipped"', 'hidden = "fail"'))
    [pinned] = load_scenarios(tmp_path)
    assert pinned.checks["hidden"] == "fail"


def test_each_scenario_names_only_the_checks_it_pins() -> None:
    """A line that restates the default says nothing: every [checks] entry
    of a sample differs from what the loader would expect without it."""
    restated = {}
    for folder in sorted(p for p in SAMPLES_DIR.iterdir() if (p / "scenario.toml").is_file()):
        pinned = tomllib.loads((folder / "scenario.toml").read_text()).get("checks", {})
        default = {
            c: "skipped" if c == "hidden" and not (folder / "hidden").is_dir() or c in SKIPPED_BY_DEFAULT else "pass"
            for c in CHECK_IDS
        }
        restated[folder.name] = sorted(c for c, status in pinned.items() if default[c] == status)
    assert {name: checks for name, checks in restated.items() if checks} == {}
    assert len(restated) == 77


def test_missing_tree_folder_is_named(tmp_path: Path) -> None:
    folder = make_sample(tmp_path, "nohead")
    (folder / "head" / "a.txt").unlink()
    (folder / "head").rmdir()
    with pytest.raises(SampleError) as caught:
        load_scenarios(tmp_path)
    assert str(caught.value) == f"{folder / 'head'}: missing tree folder"


def test_folder_without_scenario_is_named(tmp_path: Path) -> None:
    (tmp_path / "stray").mkdir()
    with pytest.raises(SampleError) as caught:
        load_scenarios(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / 'stray' / 'scenario.toml'}: missing")


def test_missing_samples_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(SampleError) as caught:
        load_scenarios(tmp_path / "nowhere")
    assert str(caught.value) == f"{tmp_path / 'nowhere'}: no such samples folder"


# --- the materialized repos ------------------------------------------------


def head_entries(scenario: Scenario) -> dict[str, tuple[str, str]]:
    """head/'s files as committed: [head_names] renames some."""
    return {scenario.head_names.get(path, path): entry for path, entry in dir_entries(scenario.head_dir).items()}


def test_head_names_commit_a_file_under_a_name_no_checkout_here_holds(repos: dict[str, Path]) -> None:
    listed = git(repos["odd_name"], "ls-tree", "-r", "-z", "--name-only", "agent/odd_name").split("\0")
    assert "tests/test_leap.py\n" in listed
    assert "tests/test_leap.py" not in listed


@pytest.mark.parametrize("name", NAMES)
def test_branches_hold_the_base_and_head_trees(
    scenarios: dict[str, Scenario], repos: dict[str, Path], name: str
) -> None:
    scenario, repo = scenarios[name], repos[name]
    base, head = dir_entries(scenario.base_dir), head_entries(scenario)
    assert len(base) >= 3
    assert ref_entries(repo, "main") == base
    assert ref_entries(repo, f"agent/{name}") == head
    # the work tree is main, checked out, and git sees nothing to report
    assert dir_entries(repo) == base
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(repo, "symbolic-ref", "HEAD").strip() == "refs/heads/main"


@pytest.mark.parametrize("name", NAMES)
def test_history_and_diff(scenarios: dict[str, Scenario], repos: dict[str, Path], name: str) -> None:
    scenario, repo = scenarios[name], repos[name]
    branch = f"agent/{name}"
    assert git(repo, "log", "--format=%s", "main").splitlines() == [f"{name}: base"]
    assert git(repo, "log", "--format=%s", branch).splitlines() == [scenario.title, f"{name}: base"]
    assert git(repo, "rev-parse", f"{branch}^").strip() == git(repo, "rev-parse", "main").strip()
    assert git(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%at|%ct", branch).strip() == (
        f"gatetui samples <samples@gatetui.invalid>|gatetui samples <samples@gatetui.invalid>|{HEAD_TIME}|{HEAD_TIME}"
    )
    assert git(repo, "log", "-1", "--format=%at|%aI", "main").strip() == (f"{BASE_TIME}|2026-01-01T00:00:00+00:00")
    base, head = dir_entries(scenario.base_dir), head_entries(scenario)
    differ = {path for path in base.keys() | head.keys() if base.get(path) != head.get(path)}
    assert differ, "a sample whose head equals its base shows nothing"
    diffed = git(repo, "diff", "--name-only", "--no-renames", "-z", "main", branch)
    assert set(filter(None, diffed.split("\0"))) == differ
    stat_lines = git(repo, "diff", "--stat", "--no-renames", "main", branch).splitlines()
    assert stat_lines[-1].strip().startswith(f"{len(differ)} file")


def test_sample_diffs_name_the_expected_files(repos: dict[str, Path]) -> None:
    def changed(name: str) -> list[str]:
        out = git(repos[name], "diff", "--name-status", "main", f"agent/{name}")
        return sorted(out.splitlines())

    assert changed("deleted_test_file") == ["D\ttests/test_leap.py"]
    assert changed("renamed_out_of_pattern") == ["R100\ttests/test_leap.py\ttests/leap_checks.py"]
    assert changed("conftest_exit0") == ["A\ttests/conftest.py"]
    assert changed("addopts_deselect") == ["M\tpyproject.toml"]
    assert changed("js_only") == ["M\ttests/sum.test.js"]
    assert changed("undeclared_package") == ["M\tcalendarlib/core.py"]


def test_shas_are_the_same_on_every_run(tmp_path: Path, repos: dict[str, Path]) -> None:
    again = {scenario.name: path for scenario, path in write_all(tmp_path / "again")}
    assert sorted(again) == NAMES
    for name in NAMES:
        refs = ["main", f"agent/{name}"]
        first = git(repos[name], "rev-parse", *refs).split()
        second = git(again[name], "rev-parse", *refs).split()
        assert first == second
        assert len(first[0]) == 40 and first[0] != first[1]


def test_repos_pass_git_fsck(repos: dict[str, Path]) -> None:
    for name in ("honest_fix", "js_only", "renamed_out_of_pattern"):
        git(repos[name], "fsck", "--strict", "--no-dangling")


def test_exec_bits_symlinks_and_caches(tmp_path: Path) -> None:
    root = tmp_path / "samples"
    folder = make_sample(root, "modes")
    base, head = folder / "base", folder / "head"
    (base / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (base / "run.sh").chmod(0o755)
    (head / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (head / "run.sh").chmod(0o644)
    (base / "link").symlink_to("a.txt")
    for cache in ("__pycache__", ".pytest_cache", "node_modules"):
        (base / "pkg" / cache).mkdir(parents=True, exist_ok=True)
        (base / "pkg" / cache / "junk.txt").write_text("junk\n")
    (base / "pkg" / "mod.py").write_text("X = 1\n")
    (base / "empty").mkdir()
    [scenario] = load_scenarios(root)

    repo = materialize(scenario, tmp_path / "repo")
    assert repo == tmp_path / "repo"
    main = ref_entries(repo, "main")
    assert main == {
        "a.txt": ("100644", blob_sha(b"a\n")),
        "link": ("120000", blob_sha(b"a.txt")),
        "pkg/mod.py": ("100644", blob_sha(b"X = 1\n")),
        "run.sh": ("100755", blob_sha(b"#!/bin/sh\necho hi\n")),
    }
    assert ref_entries(repo, "agent/modes")["run.sh"] == ("100644", blob_sha(b"#!/bin/sh\necho hi\n"))
    assert os.access(repo / "run.sh", os.X_OK) is True
    assert os.readlink(repo / "link") == "a.txt"
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    diffed = git(repo, "diff", "--name-only", "main", "agent/modes").split()
    assert sorted(diffed) == ["a.txt", "link", "pkg/mod.py", "run.sh"]


def test_materialize_into_an_existing_empty_folder(tmp_path: Path) -> None:
    make_sample(tmp_path / "samples", "tiny")
    [scenario] = load_scenarios(tmp_path / "samples")
    dest = tmp_path / "empty"
    dest.mkdir()
    assert materialize(scenario, dest) == dest
    assert git(dest, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert (dest / "a.txt").read_text() == "a\n"


def test_materialize_refuses_a_non_empty_dest(tmp_path: Path) -> None:
    make_sample(tmp_path / "samples", "tiny")
    [scenario] = load_scenarios(tmp_path / "samples")
    dest = tmp_path / "busy"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine\n")
    with pytest.raises(SampleError) as caught:
        materialize(scenario, dest)
    assert str(dest) in str(caught.value)
    assert sorted(p.name for p in dest.iterdir()) == ["notes.txt"]

    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    with pytest.raises(SampleError) as caught:
        materialize(scenario, a_file)
    assert str(caught.value) == f"{a_file}: exists and is not a folder"
