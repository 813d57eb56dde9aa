"""bench/releases.py's pure parts: unpacking a release, the repo it makes,
the report. Nothing here downloads or gates (that is `make eval`)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from dulwich.objects import Blob, Commit, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from bench import releases
from bench.releases import Pair


def _tarball(path: Path, members: dict[str, bytes], exec_names: frozenset[str] = frozenset()) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755 if name in exec_names else 0o644
            tar.addfile(info, io.BytesIO(data))
    return path


def test_strip_top_finds_the_one_top_folder() -> None:
    assert releases.strip_top(["pkg-1.0/setup.py", "pkg-1.0/tests/test_a.py"]) == "pkg-1.0/"
    assert releases.strip_top(["package/index.js", "./package/test/a.js"]) == "package/"


def test_strip_top_keeps_a_flat_archive_whole() -> None:
    assert releases.strip_top(["setup.py", "pkg/__init__.py"]) == ""
    assert releases.strip_top(["a/x.py", "b/y.py"]) == ""


def test_unpack_strips_the_top_folder_and_keeps_exec_bits(tmp_path: Path) -> None:
    archive = _tarball(
        tmp_path / "pkg-1.0.tar.gz",
        {"pkg-1.0/pkg/__init__.py": b"x = 1\n", "pkg-1.0/run.sh": b"#!/bin/sh\n"},
        exec_names=frozenset({"pkg-1.0/run.sh"}),
    )
    files = releases.unpack(archive)
    assert files == {
        "pkg/__init__.py": (b"x = 1\n", releases.MODE_FILE),
        "run.sh": (b"#!/bin/sh\n", releases.MODE_EXEC),
    }


def test_unpack_drops_a_path_that_climbs_out(tmp_path: Path) -> None:
    archive = _tarball(tmp_path / "p.tar.gz", {"p-1/ok.py": b"", "p-1/../../evil.py": b""})
    assert set(releases.unpack(archive)) == {"ok.py"}


def test_make_repo_puts_release_n_on_main_and_n_plus_1_on_the_agent_branch(tmp_path: Path) -> None:
    pair = Pair("python", "pkg", "1.0", "1.1")
    base = {"pkg/__init__.py": (b"v = 0\n", releases.MODE_FILE), "tests/test_a.py": (b"", releases.MODE_FILE)}
    head = {"pkg/__init__.py": (b"v = 1\n", releases.MODE_FILE), "tests/test_a.py": (b"", releases.MODE_FILE)}
    releases.make_repo(tmp_path / "repo", pair, base, head)
    with Repo(str(tmp_path / "repo")) as repo:
        main, agent = (repo[repo.refs[Ref(b"refs/heads/main")]], repo[repo.refs[Ref(b"refs/heads/agent/release")]])
        assert isinstance(agent, Commit) and agent.parents == [main.id]
        tree = repo[agent.tree]
        assert isinstance(tree, Tree)
        package = repo[tree[b"pkg"][1]]
        assert isinstance(package, Tree)
        blob = repo[package[b"__init__.py"][1]]
        assert isinstance(blob, Blob) and blob.as_raw_string() == b"v = 1\n"
        assert repo.refs.as_dict(Ref(b"refs/tags/")) == {b"v1.0": main.id}  # base's release is tagged


@pytest.mark.parametrize(
    ("reading", "kind"),
    [
        ("true: the release removed test_x", "true"),
        ("false (hatch-vcs version file): ...", "false"),
        ("out of reach (needs a network): ...", "out of reach"),
        (None, "unread"),
        ("maybe", "unread"),
    ],
)
def test_reading_kind(reading: str | None, kind: str) -> None:
    assert releases.reading_kind(reading) == kind


def test_one_line_escapes_pipes_and_cuts() -> None:
    assert releases.one_line("a |\n b") == "a \\| b"
    assert releases.one_line("x" * 50, width=10) == "x" * 9 + "…"


def test_render_counts_each_non_pass_check_by_its_reading() -> None:
    pair = Pair("python", "pkg", "1.0", "1.1")
    results = {
        pair.key: {
            "verdict": "review",
            "exit": 1,
            "seconds": 3.0,
            "commit": "abc",
            "checks": [
                {"id": "install", "status": "pass", "detail": "ok"},
                {"id": "hidden", "status": "skipped", "detail": "not configured"},
                {"id": "covered", "status": "review", "detail": "pkg/a.py: 3"},
                {"id": "bites", "status": "review", "detail": "1 survivor"},
            ],
        }
    }
    text = releases.render([pair], results, {(pair.key, "covered"): "true: line 3 has no test"}, "abc")
    assert "| covered | review | pkg/a.py: 3 | true: line 3 has no test |" in text
    assert "| bites | review | 1 survivor | unread |" in text
    assert "| hidden |" not in text
    assert "| true | 1 |" in text and "| unread | 1 |" in text
    assert releases.COMMAND in text


def test_selected_names_a_project_or_one_pair() -> None:
    pairs = releases._chain("python", "pkg", "1", "2", "3")
    assert releases.selected(pairs, "pkg") == pairs
    assert releases.selected(pairs, "pkg@2..3") == pairs[1:]
    with pytest.raises(releases.BenchError, match="no such project"):
        releases.selected(pairs, "other")


def test_the_pairs_are_consecutive_and_distinct() -> None:
    keys = [p.key for p in releases.PAIRS]
    assert len(keys) == len(set(keys))
    assert len(releases.PAIRS) >= 20 and len({p.name for p in releases.PAIRS if p.stack == "python"}) >= 10
