"""go vet judged against base: its findings read so that a
finding moved by lines above it is the same finding (stacks/go/vet.py),
and the install failing only on a finding head adds (gate/phases/lint.py).

The reader's tests need nothing; the rest run the real `go vet` and real
gates of the go_vet_at_base and go_vet_added samples, and of repos made
here."""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatetui.backends.local import LocalBackend
from gatetui.config import Settings
from gatetui.gate.checks import CheckId, Verdict
from gatetui.gate.events import GateEvent, OutputChunk, RunFinished
from gatetui.gate.plan import GateRequest, make_plan
from gatetui.gate.runner import run_gate
from gatetui.git.snapshot import Snapshot
from gatetui.lab.samples import SAMPLES_DIR, load_scenarios, materialize
from gatetui.stacks import registry
from gatetui.stacks.base import ReportProblem
from gatetui.stacks.go import STACK
from gatetui.stacks.go.profile import INSTALL, VET, go_profile
from gatetui.stacks.go.vet import read_vet
from tests.support.baseline_cache import MemoryCache
from tests.support.repos import MakeRepo

HAS_GO = shutil.which("go") is not None
NEEDS_GO = pytest.mark.skipif(
    not HAS_GO, reason="go is not installed (Debian: apt-get install golang-go; .ci/run installs it)"
)
ROOT = "/tmp/ws/tree"
EXAMPLE = "stats_test.go: ExampleAverage refers to unknown identifier: Average (tests)"
SNAP = Snapshot.of_files(
    {"go.mod": "module example.com/stats\n\ngo 1.19\n", "stats_test.go": "package stats\n"}, sha="b" * 40
)
STRUCTTAG = 'stats.go: struct field Median repeats json tag "mean" also at stats.go (structtag)'


def report(*blocks: dict[str, object]) -> bytes:
    """What `go vet -json` writes: a `# package` line before each package's object."""
    return "".join(f"# {next(iter(b))}\n{json.dumps(b, indent=1)}\n" for b in blocks).encode()


# --- the reader ------------------------------------------------------------------------------------


def test_a_finding_is_its_file_message_and_analyzer_never_its_line() -> None:
    raw = report(
        {
            "example.com/stats": {
                "tests": [
                    {
                        "posn": f"{ROOT}/stats_test.go:27:1",
                        "message": "ExampleAverage refers to unknown identifier: Average",
                    }
                ],
                "printf": [
                    {"posn": f"{ROOT}/sub/p.go:5:20", "message": "fmt.Printf format %d has arg s of wrong type string"},
                    {"posn": f"{ROOT}/sub/p.go:9:2", "message": "fmt.Printf format %d has arg s of wrong type string"},
                ],
            }
        },
        {"example.com/stats/clean": {}},
    )
    assert read_vet(raw, ROOT + "/") == [
        EXAMPLE,
        "sub/p.go: fmt.Printf format %d has arg s of wrong type string (printf)",
        "sub/p.go: fmt.Printf format %d has arg s of wrong type string (printf)",
    ]


def test_a_position_or_the_tree_inside_a_message_is_dropped_too() -> None:
    raw = report(
        {
            "example.com/stats": {
                "structtag": [
                    {
                        "posn": f"{ROOT}/stats.go:36:2",
                        "message": 'struct field Median repeats json tag "mean" also at stats.go:35',
                    },
                    {"posn": f"{ROOT}/a.go:3", "message": f"see {ROOT}/b.go:12:4 for\nthe other"},
                ]
            }
        }
    )
    assert read_vet(raw, ROOT) == [STRUCTTAG, "a.go: see b.go for the other (structtag)"]


def test_an_analyzer_that_failed_on_a_package_is_a_finding_and_a_path_elsewhere_stays_whole() -> None:
    raw = report(
        {
            "example.com/x": {
                "asmdecl": {"error": "cannot read x.s"},
                "printf": [{"posn": "/elsewhere/y.go:1:1", "message": "m"}],
            }
        }
    )
    assert read_vet(raw, ROOT) == ["cannot read x.s (asmdecl)", "/elsewhere/y.go: m (printf)"]


def test_no_findings_is_no_keys() -> None:
    assert read_vet(b"# example.com/c\n{}\n", ROOT) == []
    assert read_vet(b"", ROOT) == []


@pytest.mark.parametrize(
    "raw, said",
    [
        (None, "go vet wrote no report"),
        (
            b"vet: ./bad.go:2:9: expected ')', found '{'\n",
            "go vet's report holds no JSON: vet: ./bad.go:2:9: expected ')', found '{'",
        ),
    ],
)
def test_a_missing_or_unreadable_report_is_a_report_problem(raw: bytes | None, said: str) -> None:
    with pytest.raises(ReportProblem) as caught:
        read_vet(raw, ROOT)
    assert str(caught.value) == said


@given(st.binary(max_size=400) | st.text(alphabet='{}[]":,# \nabc0/.', max_size=200).map(str.encode))
def test_any_bytes_give_keys_or_a_report_problem(raw: bytes) -> None:
    try:
        keys = read_vet(raw, ROOT)
    except ReportProblem:
        return
    assert all(isinstance(key, str) for key in keys)


# --- the profile -----------------------------------------------------------------------------------


def test_vet_is_the_lint_and_go_test_leaves_vet_to_it() -> None:
    """The install builds; vet runs as the lint, judged against base; the
    runs' own go test vets nothing (its few analyzers would fail a package
    base already has findings in, in every run)."""
    profile = registry.load_profile(SNAP)
    assert (profile.install.commands, profile.install.lint) == ((INSTALL,), VET)
    assert INSTALL.endswith("&& go build ./...") and "go vet" not in INSTALL
    assert (VET.label, VET.report, profile.suite.env["GOFLAGS"]) == ("go vet", "vet.json", "-mod=readonly -vet=off")


def test_a_custom_install_gets_no_lint_and_go_test_vets_as_usual() -> None:
    profile = go_profile(STACK, SNAP, Settings(install=("go build ./... && go vet ./...",)))
    assert (profile.install.lint, profile.suite.env["GOFLAGS"]) == (None, "-mod=readonly")


# --- the real go vet -------------------------------------------------------------------------------


def run_lint(tree: Path, home: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The profile's lint command as the install runs it, in `tree`."""
    out = home / "vet.json"
    command = VET.command.replace("{report}", shlex.quote(str(out)))
    done = subprocess.run(
        ["sh", "-c", command],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(home), "GOPROXY": "off"},
    )
    return done, out


@NEEDS_GO
@pytest.mark.drives
def test_the_real_vet_finds_the_same_finding_at_base_and_head_where_lines_moved(tmp_path: Path) -> None:
    """go_vet_at_base: head adds a test above the example, six lines down."""
    found = {}
    for side in ("base", "head"):
        tree = tmp_path / side
        shutil.copytree(SAMPLES_DIR / "go_vet_at_base" / side, tree)
        (tmp_path / f"home-{side}").mkdir()
        done, out = run_lint(tree, tmp_path / f"home-{side}")
        assert done.returncode == 0, done.stderr
        assert f"/{side}/stats_test.go:{27 if side == 'base' else 33}:1" in out.read_text()
        found[side] = read_vet(out.read_bytes(), str(tree))
    assert found == {"base": [EXAMPLE], "head": [EXAMPLE]}


@NEEDS_GO
@pytest.mark.drives
def test_a_test_file_vet_cannot_type_check_fails_the_lint_and_shows_why(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES_DIR / "go_vet_at_base" / "head", tmp_path / "tree")
    (tmp_path / "tree" / "bad_test.go").write_text('package stats\n\nfunc helper() int { return "x" }\n')
    (tmp_path / "home").mkdir()
    done, _ = run_lint(tmp_path / "tree", tmp_path / "home")
    assert done.returncode != 0
    assert 'bad_test.go:3:28: cannot use "x" (untyped string constant) as int value in return statement' in done.stderr


# --- real gates ------------------------------------------------------------------------------------


def gate(repo: Path, work: Path, branch: str, cache: MemoryCache | None = None) -> list[GateEvent]:
    async def run() -> list[GateEvent]:
        plan = await asyncio.to_thread(make_plan, GateRequest(repo, "main", branch, baseline_cache=cache))
        return [e async for e in run_gate(plan, LocalBackend(work_root=work))]

    return asyncio.run(run())


def finished(events: list[GateEvent]) -> RunFinished:
    assert isinstance(events[-1], RunFinished)
    return events[-1]


def streams(events: list[GateEvent]) -> set[str]:
    return {e.stream for e in events if isinstance(e, OutputChunk)}


def sample(name: str, root: Path) -> tuple[dict[str, str], str, Path]:
    """The sample's expected statuses and verdict, and its repo."""
    (scenario,) = [s for s in load_scenarios() if s.name == name]
    return dict(scenario.checks), scenario.verdict, materialize(scenario, root / name)


def install_detail(done: RunFinished) -> str:
    return {r.id: r.detail for r in done.results}[CheckId.INSTALL]


@NEEDS_GO
@pytest.mark.sandbox
def test_a_finding_base_already_has_is_told_not_failed_and_base_is_linted_once(tmp_path: Path) -> None:
    """go_vet_at_base passes, naming base's finding; a second gate on the
    same base reads base's findings from the cache: no base lint runs."""
    checks, verdict, repo = sample("go_vet_at_base", tmp_path)
    cache = MemoryCache()
    first = gate(repo, tmp_path / "work", "agent/go_vet_at_base", cache)
    done = finished(first)
    assert ({r.id.value: r.status.value for r in done.results}, done.verdict.value) == (checks, verdict)
    said = f"fresh copy, fresh environment; go vet: 1 finding that base has too, not this change's: {EXAMPLE}"
    assert install_detail(done) == said
    assert "base lint" in streams(first)
    ((key, record),) = cache.records.items()
    assert key.startswith(f"lint-{done.digests.base}-")
    assert record == {"format": 1, "base": done.digests.base, "findings": {EXAMPLE: 1}}
    second = gate(repo, tmp_path / "work", "agent/go_vet_at_base", cache)
    assert (finished(second).verdict, install_detail(finished(second))) == (Verdict.PASS, said)
    assert "base lint" not in streams(second)


@NEEDS_GO
@pytest.mark.sandbox
def test_a_finding_head_adds_fails_the_install_named(tmp_path: Path) -> None:
    checks, verdict, repo = sample("go_vet_added", tmp_path)
    done = finished(gate(repo, tmp_path / "work", "agent/go_vet_added"))
    assert ({r.id.value: r.status.value for r in done.results}, done.verdict.value) == (checks, verdict)
    assert install_detail(done) == f"go vet: head adds 1 finding: {STRUCTTAG}; and 1 finding that base has too"


@NEEDS_GO
@pytest.mark.sandbox
def test_a_test_file_vet_cannot_check_fails_the_install_when_base_vets(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo(go_honest("base"), {"bad_test.go": 'package stats\n\nfunc helper() int { return "x" }\n'})
    done = finished(gate(repo, tmp_path / "work", "agent/x"))
    assert (done.verdict, {r.id: r.status.value for r in done.results}[CheckId.INSTALL]) == (Verdict.FAIL, "fail")
    detail = install_detail(done)
    assert detail.startswith("`go vet` failed (exit code ")
    assert detail.endswith(
        'bad_test.go:3:28: cannot use "x" (untyped string constant) as int value in return statement; base installs'
    )


def go_honest(side: str) -> dict[str, str]:
    folder = SAMPLES_DIR / "go_honest" / side
    return {p.name: p.read_text() for p in folder.iterdir()}


@NEEDS_GO
@pytest.mark.sandbox
def test_a_printf_finding_base_has_fails_no_run_since_go_test_leaves_vet_to_the_lint(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    """printf is one of the analyzers `go test` runs itself: with them on,
    every run at base and head would fail to build the package."""
    describe = (
        'package stats\n\nimport "fmt"\n\n// Describe says x.\nfunc Describe(x float64) string {\n'
        '\treturn fmt.Sprintf("%d", x)\n}\n'
    )
    repo = make_repo({**go_honest("base"), "describe.go": describe}, go_honest("head"))
    done = finished(gate(repo, tmp_path / "work", "agent/x"))
    assert done.verdict == Verdict.PASS, [(r.id.value, r.detail) for r in done.results]
    assert install_detail(done) == (
        "fresh copy, fresh environment; go vet: 1 finding that base has too, not this "
        "change's: describe.go: fmt.Sprintf format %d has arg x of wrong type float64 "
        "(printf)"
    )
