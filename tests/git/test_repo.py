"""gatetui.git.repo against real git repositories built in tmp_path.

Repositories are made with the git CLI (and, for trees git would refuse to
build, with dulwich directly); git is also the oracle for refs, trees and
diff headers.  The central guarantee is checked last: calling every method
leaves the repository byte-identical.
"""

from __future__ import annotations

import gc
import hashlib
import os
import shutil
import stat
import subprocess
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from dulwich.objects import Blob, Tree
from dulwich.objects import Commit as DCommit
from dulwich.repo import Repo

from gatetui.errors import BadInput, ExitCode
from gatetui.git.changes import FileChange
from gatetui.git.repo import Commit, GitRepo, RepoError, digest_files

pytestmark = pytest.mark.xdist_group("test_repo")  # one xdist worker builds its module-scoped big repo

# --------------------------------------------------------------------------
# building repositories


def _git_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="Ada Agent",
        GIT_AUTHOR_EMAIL="ada@example.com",
        GIT_COMMITTER_NAME="Ada Agent",
        GIT_COMMITTER_EMAIL="ada@example.com",
        GIT_AUTHOR_DATE="1700000000 +0000",
        GIT_COMMITTER_DATE="1700000000 +0000",
        LC_ALL="C",
    )
    return env


def git(repo: Path, *args: str, stdin: bytes | None = None, date: int | None = None) -> str:
    env = _git_env(repo.parent)
    if date is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{date} +0000"
    proc = subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, env=env, check=True)
    return proc.stdout.decode("utf-8", "surrogateescape")


def write(root: Path, rel: str, data: bytes | str, mode: int = 0o644) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    path.chmod(mode)


APP_V1 = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(12))
APP_V2 = APP_V1.replace("return 5\n", "return 500\n")
OLD_NAME = "".join(f"line {i} of the module that moves\n" for i in range(20))
NEW_NAME = OLD_NAME.replace("line 7 of", "LINE 7 of")


def build_sample(root: Path) -> dict[str, str]:
    """main: c1 -> c3; agent/fix: c1 -> c2; tags v1 (light), v1-ann (annotated)."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "README.md", "# sample\n")
    write(root, "src/app.py", APP_V1)
    write(root, "src/util.py", "X = 1\n")
    write(root, "run.sh", "#!/bin/sh\necho hi\n", 0o755)
    os.symlink("src/app.py", root / "link")
    write(root, "data.bin", b"\x00\x01\x02binary\n")
    write(root, "docs/guide.md", "how to\n")
    write(root, "old_name.py", OLD_NAME)
    write(root, "empty.txt", b"")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first commit\n\nwith a body")
    c1 = git(root, "rev-parse", "HEAD").strip()
    git(root, "tag", "v1")
    git(root, "tag", "-a", "v1-ann", "-m", "annotated")
    git(root, "update-ref", "refs/remotes/origin/main", c1)

    git(root, "checkout", "-q", "-b", "agent/fix")
    write(root, "src/app.py", APP_V2)
    write(root, "new.txt", "brand new\n")
    (root / "docs/guide.md").unlink()
    (root / "old_name.py").unlink()
    write(root, "pkg/new_name.py", NEW_NAME)
    (root / "src/util.py").chmod(0o755)
    write(root, "data.bin", b"\x00\x01\x02binary v2\n")
    (root / "link").unlink()
    os.symlink("src/util.py", root / "link")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "agent: fix things", date=1700000100)
    c2 = git(root, "rev-parse", "HEAD").strip()

    git(root, "checkout", "-q", "main")
    write(root, "README.md", "# sample\n\nmore\n")
    git(root, "commit", "-q", "-am", "main moves on", date=1700000200)
    c3 = git(root, "rev-parse", "HEAD").strip()
    git(root, "branch", "agent/other", c1)
    return {"c1": c1, "c2": c2, "c3": c3}


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("sample") / "repo"
    shas = build_sample(root)
    return root, shas


@pytest.fixture
def sample(sample_dir: tuple[Path, dict[str, str]]) -> Iterator[tuple[GitRepo, dict[str, str]]]:
    root, shas = sample_dir
    with GitRepo.open(root) as repo:
        yield repo, shas


@pytest.fixture
def sample_copy(sample_dir: tuple[Path, dict[str, str]], tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root, shas = sample_dir
    dest = tmp_path / "copy"
    shutil.copytree(root, dest, symlinks=True)
    return dest, shas


def commit_tree(path: Path, tree: Tree, parents: list[bytes], message: bytes, *blobs: Blob | Tree) -> bytes:
    """Write `tree` (and the given objects) and a commit on it with dulwich."""
    with Repo(str(path)) as r:
        for obj in (*blobs, tree):
            r.object_store.add_object(obj)
        c = DCommit()
        c.tree = tree.id
        c.parents = parents
        c.author = c.committer = b"Evil <evil@example.com>"
        c.author_time = c.commit_time = 1700000000
        c.author_timezone = c.commit_timezone = 0
        c.message = message
        r.object_store.add_object(c)
        return c.id


# --------------------------------------------------------------------------
# snapshots: the repository must never change


def snapshot(root: Path) -> dict[str, tuple[object, ...]]:
    """Every path under root (incl. .git) -> (kind, mode, mtime_ns, content hash)."""
    out: dict[str, tuple[object, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                content: object = os.readlink(full)
            elif stat.S_ISDIR(st.st_mode):
                content = None
            else:
                content = hashlib.sha256(Path(full).read_bytes()).hexdigest()
            out[rel] = (stat.S_IFMT(st.st_mode), st.st_mode, st.st_mtime_ns, content)
    st = os.lstat(root)
    out["."] = (st.st_mode, st.st_mtime_ns)
    return out


def locks(root: Path) -> list[str]:
    return sorted(str(p) for p in root.rglob("*.lock"))


# --------------------------------------------------------------------------
# open


def test_open_accepts_top_level_and_bare(sample_dir: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, shas = sample_dir
    with GitRepo.open(str(root)) as repo:
        assert repo.path == root.resolve()
        assert repo.resolve("main") == shas["c3"]
    bare = tmp_path / "bare.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(root), str(bare)], check=True, env=_git_env(tmp_path), capture_output=True
    )
    with GitRepo.open(bare) as repo:
        assert repo.path == bare.resolve()
        assert repo.resolve("agent/fix") == shas["c2"]


def test_open_errors(sample_dir: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, _ = sample_dir
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(RepoError) as err:
        GitRepo.open(plain)
    assert str(err.value) == (
        f"not a git repository: {plain.resolve()} (run `git init` or pass the repository's top-level folder)"
    )
    with pytest.raises(RepoError) as err:
        GitRepo.open(root / "src")
    assert str(err.value) == (
        f"{(root / 'src').resolve()} is inside the git repository at "
        f"{root.resolve()}: pass the top-level folder {root.resolve()}"
    )
    assert isinstance(err.value, BadInput) and err.value.exit_code == ExitCode.BAD_INPUT
    with pytest.raises(RepoError) as err:
        GitRepo.open(tmp_path / "missing")
    assert str(err.value).startswith("no such folder: ")
    with pytest.raises(RepoError) as err:
        GitRepo.open(root / "README.md")
    assert str(err.value).startswith("not a folder: ")


# --------------------------------------------------------------------------
# resolve


def test_resolve_every_ref_kind(sample: tuple[GitRepo, dict[str, str]]) -> None:
    repo, s = sample
    root = repo.path
    tag_obj = git(root, "rev-parse", "v1-ann").strip()
    assert tag_obj != s["c1"]  # an annotated tag really is its own object
    cases = {
        "HEAD": s["c3"],
        "@": s["c3"],
        "main": s["c3"],
        "refs/heads/main": s["c3"],
        "heads/main": s["c3"],
        "agent/fix": s["c2"],
        "refs/heads/agent/fix": s["c2"],
        "v1": s["c1"],
        "refs/tags/v1": s["c1"],
        "v1-ann": s["c1"],
        "refs/tags/v1-ann": s["c1"],
        tag_obj: s["c1"],
        "origin/main": s["c1"],
        "refs/remotes/origin/main": s["c1"],
        s["c2"]: s["c2"],
        s["c2"].upper(): s["c2"],
        s["c2"][:7]: s["c2"],
        s["c2"][:12]: s["c2"],
        "HEAD~1": s["c1"],
        "HEAD^": s["c1"],
        "main^1": s["c1"],
        "agent/fix~1": s["c1"],
        "HEAD^0": s["c3"],
        "v1-ann^{commit}": s["c1"],
        "main^{}": s["c3"],
        "agent/fix^1~0": s["c1"],
    }
    for ref, want in cases.items():
        assert repo.resolve(ref) == want, ref
        assert repo.resolve(ref) == git(root, "rev-parse", "--verify", ref + "^{commit}").strip()


def test_resolve_unknown_and_non_commit(sample: tuple[GitRepo, dict[str, str]]) -> None:
    repo, s = sample
    for bad in [
        "nope",
        "agent/nope",
        "refs/heads/nope",
        "../config",
        "..",
        "HEAD~9",
        "main^3",
        "main~x",
        "~1",
        "main^{tree}",
        " main",
        "",
        "0000000000000000000000000000000000000000",
    ]:
        with pytest.raises(RepoError) as err:
            repo.resolve(bad)
        assert str(err.value).startswith(f"unknown ref {bad!r} in {repo.path}: "), bad
    with pytest.raises(RepoError) as err:
        repo.resolve("nope")
    assert str(err.value) == (  # the branches that do exist are named
        f"unknown ref 'nope' in {repo.path}: no branch, tag or commit by that name "
        "(branches: agent/fix, agent/other, main)"
    )
    with pytest.raises(RepoError) as err:
        repo.resolve("agent/fixx")
    assert str(err.value).endswith("(did you mean agent/fix? branches: agent/fix, agent/other, main)")
    with pytest.raises(RepoError) as err:
        repo.resolve("HEAD~9")
    assert str(err.value) == (f"unknown ref 'HEAD~9' in {repo.path}: commit {s['c1'][:7]} has 0 parent(s), not 1")
    tree = git(repo.path, "rev-parse", "HEAD^{tree}").strip()
    with pytest.raises(RepoError) as err:
        repo.resolve(tree)
    assert str(err.value) == f"ref {tree!r} in {repo.path} names a tree, not a commit"
    blob = git(repo.path, "rev-parse", "HEAD:README.md").strip()
    with pytest.raises(RepoError) as err:
        repo.resolve(blob[:10])
    assert str(err.value) == f"ref {blob[:10]!r} in {repo.path} names a blob, not a commit"


def test_resolve_packed_refs(sample_copy: tuple[Path, dict[str, str]]) -> None:
    root, s = sample_copy
    git(root, "pack-refs", "--all")
    assert not (root / ".git/refs/heads/main").exists()
    assert not (root / ".git/refs/tags/v1-ann").exists()
    packed = (root / ".git/packed-refs").read_text()
    assert "refs/heads/agent/fix" in packed and "refs/remotes/origin/main" in packed
    with GitRepo.open(root) as repo:
        assert repo.resolve("HEAD") == s["c3"]
        assert repo.resolve("main") == s["c3"]
        assert repo.resolve("agent/fix") == s["c2"]
        assert repo.resolve("refs/heads/agent/fix") == s["c2"]
        assert repo.resolve("v1") == s["c1"]
        assert repo.resolve("v1-ann") == s["c1"]
        assert repo.resolve("origin/main") == s["c1"]
        assert repo.branches() == {"agent/fix": s["c2"], "agent/other": s["c1"], "main": s["c3"]}


def test_resolve_prefers_tag_then_branch_like_git(sample_copy: tuple[Path, dict[str, str]]) -> None:
    root, s = sample_copy
    git(root, "tag", "agent/fix", s["c1"])  # same name as a branch
    with GitRepo.open(root) as repo:
        assert repo.resolve("agent/fix") == s["c1"]
        assert repo.resolve("refs/heads/agent/fix") == s["c2"]
        assert repo.resolve("heads/agent/fix") == s["c2"]


def _collide(n: int = 4) -> tuple[list[DCommit], Tree]:
    """Two commits whose ids share their first n hex digits (deterministic)."""
    tree = Tree()
    seen: dict[bytes, DCommit] = {}
    i = 0
    while True:
        c = DCommit()
        c.tree = tree.id
        c.author = c.committer = b"A <a@example.com>"
        c.author_time = c.commit_time = 1700000000
        c.author_timezone = c.commit_timezone = 0
        c.message = b"attempt %d\n" % i
        key = c.id[:n]
        if key in seen:
            return [seen[key], c], tree
        seen[key] = c
        i += 1


def test_resolve_short_sha_ambiguity(tmp_path: Path) -> None:
    root = tmp_path / "amb"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (a, b), tree = _collide()
    with Repo(str(root)) as r:
        for obj in (tree, a, b):
            r.object_store.add_object(obj)
    prefix = a.id[:4].decode()
    with GitRepo.open(root) as repo:
        with pytest.raises(RepoError) as err:
            repo.resolve(prefix)
        assert str(err.value) == (
            f"ambiguous short sha {prefix!r} in {repo.path}: 2 commits start with it; give more characters"
        )
        common = len(os.path.commonprefix([a.id, b.id]))
        assert repo.resolve(a.id[: common + 1].decode()) == a.id.decode()
        assert repo.resolve(b.id[: common + 1].decode()) == b.id.decode()
        with pytest.raises(RepoError) as err:
            repo.resolve(prefix[:3])
        assert "at least 4 characters" in str(err.value)
    # git agrees that the prefix is ambiguous
    proc = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--verify", "-q", prefix + "^{commit}"],
        capture_output=True,
        env=_git_env(tmp_path),
    )
    assert proc.returncode != 0


def test_short_sha_shared_with_a_blob_picks_the_commit(tmp_path: Path) -> None:
    root = tmp_path / "mixed"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    tree = Tree()
    c = DCommit()
    c.tree = tree.id
    c.author = c.committer = b"A <a@example.com>"
    c.author_time = c.commit_time = 1700000000
    c.author_timezone = c.commit_timezone = 0
    c.message = b"the commit\n"
    i = 0
    while True:  # hashlib is much faster than building dulwich Blobs
        content = b"blob %d\n" % i
        if hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()[:4] == c.id[:4].decode():
            break
        i += 1
    blob = Blob.from_string(content)
    assert blob.id[:4] == c.id[:4]
    with Repo(str(root)) as r:
        for obj in (tree, c, blob):
            r.object_store.add_object(obj)
    with GitRepo.open(root) as repo:
        assert repo.resolve(c.id[:4].decode()) == c.id.decode()


def test_empty_repository(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    with GitRepo.open(root) as repo:
        with pytest.raises(RepoError) as err:
            repo.resolve("HEAD")
        assert str(err.value) == (
            f"unknown ref 'HEAD' in {repo.path}: no branch, tag or commit by that name "
            "(the repository has no commits yet: commit first)"
        )
        assert repo.branches() == {}


# --------------------------------------------------------------------------
# commits, merge bases, branches


def test_commit_facts(sample: tuple[GitRepo, dict[str, str]]) -> None:
    repo, s = sample
    c = repo.commit("agent/fix")
    assert c == Commit(
        sha=s["c2"],
        short=s["c2"][:7],
        summary="agent: fix things",
        author="Ada Agent <ada@example.com>",
        time=1700000100,
    )
    first = repo.commit(s["c1"])
    assert first.summary == "first commit"
    assert first.time == int(git(repo.path, "log", "-1", "--format=%ct", s["c1"]))
    assert repo.commit("v1-ann").sha == s["c1"]


def test_merge_base(sample_copy: tuple[Path, dict[str, str]]) -> None:
    root, s = sample_copy
    git(root, "checkout", "-q", "--orphan", "unrelated")
    git(root, "rm", "-q", "-rf", ".")
    write(root, "other.txt", "x\n")
    git(root, "add", "other.txt")
    git(root, "commit", "-q", "-m", "unrelated root")
    with GitRepo.open(root) as repo:
        assert repo.merge_base("main", "agent/fix") == s["c1"]
        assert repo.merge_base("agent/fix", "main") == s["c1"]
        assert repo.merge_base("main", "main") == s["c3"]
        assert repo.merge_base("main", s["c1"]) == s["c1"]
        assert repo.merge_base("main", "unrelated") is None
        assert repo.merge_base("main", "agent/fix") == git(root, "merge-base", "main", "agent/fix").strip()


def test_branches(sample: tuple[GitRepo, dict[str, str]]) -> None:
    repo, s = sample
    assert repo.branches() == {"agent/fix": s["c2"], "agent/other": s["c1"], "main": s["c3"]}
    assert repo.branches("agent/*") == {"agent/fix": s["c2"], "agent/other": s["c1"]}
    assert repo.branches("agent/f*") == {"agent/fix": s["c2"]}
    assert repo.branches("release/*") == {}


# --------------------------------------------------------------------------
# changes and diffs


def test_changes_read_only_the_contents_asked_for(sample: tuple[GitRepo, dict[str, str]]) -> None:
    """The gate asks for test files' contents only: head's data files are
    never read into memory; a rename is asked for by both its paths."""
    repo, s = sample
    asked: list[list[str]] = []

    def wanted(paths: list[str]) -> bool:
        asked.append(paths)
        return any(p.endswith(".py") for p in paths)

    got = {c.path: (c.old_data is not None, c.new_data is not None) for c in repo.changes(s["c1"], "agent/fix", wanted)}
    assert got == {
        "data.bin": (False, False),
        "docs/guide.md": (False, False),
        "link": (False, False),
        "new.txt": (False, False),
        "pkg/new_name.py": (True, True),
        "src/app.py": (True, True),
        "src/util.py": (True, True),
    }
    assert ["old_name.py", "pkg/new_name.py"] in asked


def test_changes_kinds_and_contents(sample: tuple[GitRepo, dict[str, str]]) -> None:
    repo, s = sample
    got = repo.changes(s["c1"], "agent/fix")
    assert got == [
        FileChange("modify", "data.bin", "data.bin", b"\x00\x01\x02binary\n", b"\x00\x01\x02binary v2\n"),
        FileChange("delete", "docs/guide.md", None, b"how to\n", None),
        FileChange("modify", "link", "link", b"src/app.py", b"src/util.py"),
        FileChange("add", None, "new.txt", None, b"brand new\n"),
        FileChange("rename", "old_name.py", "pkg/new_name.py", OLD_NAME.encode(), NEW_NAME.encode()),
        FileChange("modify", "src/app.py", "src/app.py", APP_V1.encode(), APP_V2.encode()),
        FileChange("modify", "src/util.py", "src/util.py", b"X = 1\n", b"X = 1\n"),  # exec bit only
    ]
    assert [c.path for c in got] == sorted(c.path for c in got)
    # the reverse direction swaps the sides
    back = repo.changes("agent/fix", s["c1"])
    assert FileChange("rename", "pkg/new_name.py", "old_name.py", NEW_NAME.encode(), OLD_NAME.encode()) in back
    assert FileChange("add", None, "docs/guide.md", None, b"how to\n") in back
    assert repo.changes("main", "main") == []


def test_changes_agree_with_git_name_status(sample: tuple[GitRepo, dict[str, str]]) -> None:
    repo, s = sample
    out = git(repo.path, "diff", "-M", "--name-status", s["c1"], s["c2"])
    want = []
    for line in out.splitlines():
        fields = line.split("\t")
        status = fields[0][0]
        kind = {"A": "add", "D": "delete", "M": "modify", "R": "rename"}[status]
        want.append((kind, fields[-1]))
    assert sorted(want) == sorted((c.kind, c.path) for c in repo.changes(s["c1"], s["c2"]))


def test_rename_threshold_and_type_change(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    body = "".join(f"row {i}\n" for i in range(10))
    write(root, "a.txt", body)
    write(root, "b.txt", body)
    write(root, "kind", "was a file\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    (root / "a.txt").unlink()
    (root / "b.txt").unlink()
    # 6 of 10 lines kept -> >= 50% similar: a rename.  2 of 10 kept -> not.
    write(root, "a2.txt", "".join(f"row {i}\n" if i < 6 else f"new {i}\n" for i in range(10)))
    write(root, "b2.txt", "".join(f"row {i}\n" if i < 2 else f"other {i}\n" for i in range(10)))
    (root / "kind").unlink()
    os.symlink("a2.txt", root / "kind")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "two")
    with GitRepo.open(root) as repo:
        got = [(c.kind, c.old_path, c.new_path) for c in repo.changes("HEAD~1", "HEAD")]
        assert got == [
            ("rename", "a.txt", "a2.txt"),
            ("delete", "b.txt", None),
            ("add", None, "b2.txt"),
            ("modify", "kind", "kind"),
        ]
        kind = [c for c in repo.changes("HEAD~1", "HEAD") if c.path == "kind"][0]
        assert (kind.old_data, kind.new_data) == (b"was a file\n", b"a2.txt")
        ours = repo.unified_diff("HEAD~1", "HEAD")
    theirs = git(root, "diff", "-M", "HEAD~1", "HEAD")
    assert _headers(ours) == _headers(theirs)


def _headers(diff: str) -> list[str]:
    keep = (
        "diff --git",
        "rename from",
        "rename to",
        "new file mode",
        "deleted file mode",
        "old mode",
        "new mode",
        "index ",
        "--- ",
        "+++ ",
        "Binary files",
    )
    return [line for line in diff.splitlines() if line.startswith(keep)]


def test_unified_diff_matches_git(sample: tuple[GitRepo, dict[str, str]]) -> None:
    repo, s = sample
    ours = repo.unified_diff(s["c1"], s["c2"])
    theirs = git(repo.path, "diff", "-M", s["c1"], s["c2"])
    assert _headers(ours) == _headers(theirs)
    assert "Binary files a/data.bin and b/data.bin differ" in ours
    assert "diff --git a/old_name.py b/pkg/new_name.py\n" in ours
    assert "rename from old_name.py\nrename to pkg/new_name.py\n" in ours
    assert "diff --git a/src/util.py b/src/util.py\nold mode 100644\nnew mode 100755\n" in ours
    # hunks, context and "\ No newline" lines: byte for byte, but for the
    # similarity percentage (git and dulwich score renames differently)
    strip = lambda d: [ln for ln in d.splitlines() if not ln.startswith("similarity index")]  # noqa: E731
    assert strip(ours) == strip(theirs)


def test_unified_diff_quoting_and_edges(tmp_path: Path) -> None:
    root = tmp_path / "q"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "keep.txt", "same\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    write(root, "sp ace.txt", "a b\n")
    write(root, "caf\u00e9.txt", "no newline")
    write(root, 'quo"te.txt', "q\n")
    write(root, "empty", b"")
    write(root, "keep.txt", "same\nplus\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "two")
    with GitRepo.open(root) as repo:
        ours = repo.unified_diff("HEAD~1", "HEAD")
    theirs = git(root, "diff", "-M", "HEAD~1", "HEAD")
    assert ours == theirs


def test_submodule_entries_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / "sub"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "a.txt", "a\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    fake = "1234567890abcdef1234567890abcdef12345678"
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{fake},vendor/lib")
    write(root, "b.txt", "b\n")
    git(root, "add", "b.txt")
    git(root, "commit", "-q", "-m", "two")
    with GitRepo.open(root) as repo:
        assert repo.changes("HEAD~1", "HEAD") == [FileChange("add", None, "b.txt", None, b"b\n")]
        assert repo.list_files("HEAD") == ["a.txt", "b.txt"]
        assert repo.read("HEAD", "vendor/lib") is None
        assert repo.tree_sha("HEAD", "vendor/lib") == fake
        assert "vendor" not in repo.unified_diff("HEAD~1", "HEAD")
        out = tmp_path / "out"
        repo.export("HEAD", out)
        assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == ["a.txt", "b.txt"]


# --------------------------------------------------------------------------
# tree access


def test_list_files_read_tree_sha(sample: tuple[GitRepo, dict[str, str]]) -> None:
    repo, s = sample
    every = git(repo.path, "ls-tree", "-r", "--name-only", s["c2"]).splitlines()
    assert repo.list_files(s["c2"]) == sorted(every)
    assert repo.list_files("agent/fix", ["src"]) == ["src/app.py", "src/util.py"]
    assert repo.list_files("agent/fix", ["src/"]) == ["src/app.py", "src/util.py"]
    assert repo.list_files("agent/fix", ["./src/app.py"]) == ["src/app.py"]
    assert repo.list_files("agent/fix", ["src", "README.md", "src/app.py"]) == [
        "README.md",
        "src/app.py",
        "src/util.py",
    ]
    assert repo.list_files("agent/fix", ["nope", "src/app"]) == []
    assert repo.list_files("agent/fix", ["README.md/x"]) == []
    assert repo.list_files("agent/fix", [""]) == sorted(every)

    assert repo.read("agent/fix", "src/app.py") == APP_V2.encode()
    assert repo.read(s["c1"], "src/app.py") == APP_V1.encode()
    assert repo.read(s["c1"], "link") == b"src/app.py"
    assert repo.read(s["c1"], "empty.txt") == b""
    assert repo.read("agent/fix", "docs/guide.md") is None
    assert repo.read("agent/fix", "src") is None
    assert repo.read("agent/fix", "nope/deeper.txt") is None

    for path in ["", "src", "src/app.py", "link"]:
        spec = f"{s['c2']}:{path}"
        assert repo.tree_sha(s["c2"], path) == git(repo.path, "rev-parse", spec).strip()
    assert repo.tree_sha(s["c2"], "docs") is None
    for bad in ["../x", "/etc/passwd", "src/../../x", ".git/config"]:
        with pytest.raises(RepoError):
            repo.read("HEAD", bad)
        with pytest.raises(RepoError):
            repo.list_files("HEAD", [bad])


def test_export_modes_symlinks_and_paths(sample: tuple[GitRepo, dict[str, str]], tmp_path: Path) -> None:
    repo, s = sample
    out = tmp_path / "deep" / "out"
    repo.export("agent/fix", out)
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if not p.is_dir())
    assert files == repo.list_files("agent/fix")
    assert (out / "src/app.py").read_bytes() == APP_V2.encode()
    assert stat.S_IMODE((out / "src/util.py").stat().st_mode) == 0o755
    assert stat.S_IMODE((out / "run.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((out / "src/app.py").stat().st_mode) == 0o644
    assert (out / "link").is_symlink() and os.readlink(out / "link") == "src/util.py"
    assert (out / "data.bin").read_bytes() == b"\x00\x01\x02binary v2\n"
    assert (out / "empty.txt").read_bytes() == b""

    part = tmp_path / "part"
    repo.export(s["c1"], part, ["src", "docs/guide.md"])
    got = sorted(str(p.relative_to(part)) for p in part.rglob("*") if not p.is_dir())
    assert got == ["docs/guide.md", "src/app.py", "src/util.py"]
    assert stat.S_IMODE((part / "src/util.py").stat().st_mode) == 0o644  # at c1

    # exporting again over the same folder replaces the files
    repo.export("agent/fix", part, ["src"])
    assert (part / "src/app.py").read_bytes() == APP_V2.encode()
    assert stat.S_IMODE((part / "src/util.py").stat().st_mode) == 0o755


def test_export_never_writes_through_a_symlink(sample: tuple[GitRepo, dict[str, str]], tmp_path: Path) -> None:
    repo, _ = sample
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "dest"
    dest.mkdir()
    os.symlink(outside, dest / "src")
    with pytest.raises(RepoError) as err:
        repo.export("agent/fix", dest, ["src"])
    assert "is not a folder" in str(err.value)
    assert list(outside.iterdir()) == []
    with pytest.raises(RepoError):
        repo.export("agent/fix", dest, ["../x"])
    with pytest.raises(RepoError):
        repo.export("agent/fix", dest, ["/etc"])


@pytest.mark.parametrize("evil", [b"..", b".git", b".GIT", b"a/b", b"."])
def test_hostile_tree_is_refused(tmp_path: Path, evil: bytes) -> None:
    root = tmp_path / "hostile"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    payload = Blob.from_string(b"pwned\n")
    inner = Tree()
    inner.add(b"evil.txt", 0o100644, payload.id)
    inner.add(b"config", 0o100644, payload.id)
    top = Tree()
    top.add(b"ok.txt", 0o100644, payload.id)
    top.add(evil, 0o040000, inner.id)
    sha = commit_tree(root, top, [], b"hostile\n", payload, inner).decode()
    ok_top = Tree()
    ok_top.add(b"ok.txt", 0o100644, payload.id)
    base = commit_tree(root, ok_top, [], b"fine\n").decode()
    before = snapshot(root)
    dest = tmp_path / "box" / "dest"
    with GitRepo.open(root) as repo:
        with pytest.raises(RepoError) as err:
            repo.export(sha, dest)
        assert "unsafe path" in str(err.value)
        assert not dest.exists()  # refused before anything was written
        with pytest.raises(RepoError):
            repo.list_files(sha)
        if evil == b"a/b":  # joined into "a/b/evil.txt": a harmless path
            assert {c.path for c in repo.changes(base, sha)} == {"a/b/config", "a/b/evil.txt"}
        else:
            with pytest.raises(RepoError):
                repo.changes(base, sha)
        assert repo.read(sha, "ok.txt") == b"pwned\n"
        assert repo.list_files(sha, ["ok.txt"]) == ["ok.txt"]
    assert not (tmp_path / "box" / "evil.txt").exists()
    assert not (tmp_path / "evil.txt").exists()
    assert snapshot(root) == before


def test_hostile_blob_name_refused(tmp_path: Path) -> None:
    root = tmp_path / "hostile2"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    payload = Blob.from_string(b"x\n")
    top = Tree()
    top.add(b"..", 0o100644, payload.id)
    sha = commit_tree(root, top, [], b"hostile\n", payload).decode()
    with GitRepo.open(root) as repo, pytest.raises(RepoError):
        repo.export(sha, tmp_path / "d" / "e")
    assert not (tmp_path / "d").exists()


def test_forgotten_close_does_not_leak(sample_copy: tuple[Path, dict[str, str]]) -> None:
    root, s = sample_copy
    git(root, "gc", "-q")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        repo = GitRepo.open(root)
        assert repo.read("agent/fix", "new.txt") == b"brand new\n"
        del repo
        gc.collect()
    assert [str(w.message) for w in caught] == []


# --------------------------------------------------------------------------
# digests


def test_digest_files() -> None:
    a = digest_files({"x.py": b"1", "y.py": b"2"})
    assert a == digest_files({"y.py": b"2", "x.py": b"1"})
    assert len(a) == 64 and int(a, 16) >= 0
    assert a != digest_files({"x.py": b"1", "y.py": b"3"})
    assert a != digest_files({"x.py": b"1"})
    assert digest_files({"ab": b"c"}) != digest_files({"a": b"bc"})
    assert digest_files({"a": b"", "b": b""}) != digest_files({"a": b"\x00" * 8 + b"\x00\x00\x00\x00\x00\x00\x00\x01b"})
    assert digest_files({}) == digest_files({})
    assert digest_files({}) != digest_files({"": b""})


# --------------------------------------------------------------------------
# the guarantee: nothing in the repository changes


def _exercise(repo: GitRepo, s: dict[str, str], out: Path) -> None:
    for ref in ["HEAD", "main", "agent/fix", "v1", "v1-ann", "origin/main", s["c2"][:7], "HEAD~1"]:
        repo.resolve(ref)
    for bad in ["nope", "../config", "refs/heads/nope"]:
        with pytest.raises(RepoError):
            repo.resolve(bad)
    repo.commit("agent/fix")
    repo.merge_base("main", "agent/fix")
    repo.changes(s["c1"], "agent/fix")
    repo.unified_diff(s["c1"], "agent/fix")
    repo.export("agent/fix", out / "all")
    repo.export("agent/fix", out / "some", ["src"])
    repo.list_files("agent/fix")
    repo.list_files("agent/fix", ["src"])
    repo.read("agent/fix", "src/app.py")
    repo.read("agent/fix", "absent")
    repo.tree_sha("agent/fix")
    repo.tree_sha("agent/fix", "src")
    repo.branches("agent/*")


@pytest.mark.parametrize("layout", ["loose", "packed"])
def test_repository_is_never_modified(sample_copy: tuple[Path, dict[str, str]], tmp_path: Path, layout: str) -> None:
    root, s = sample_copy
    if layout == "packed":
        git(root, "gc", "-q")
        git(root, "pack-refs", "--all")
        assert list((root / ".git/objects/pack").glob("*.pack"))
    before = snapshot(root)
    assert any(k.startswith(".git/index") for k in before)
    with GitRepo.open(root) as repo:
        _exercise(repo, s, tmp_path / "exports")
    with GitRepo.open(root) as repo:  # a second open sees the same
        _exercise(repo, s, tmp_path / "exports2")
    assert snapshot(root) == before
    assert locks(root) == []
    assert git(root, "status", "--porcelain") == ""


# --------------------------------------------------------------------------
# speed: 5,000 files, 500 commits


def _fast_import_stream(n_files: int, n_commits: int) -> bytes:
    """main: a first commit of n_files files, then one small edit per commit;
    agent/big: on top of main, a rename with an edit, a modify and an add."""
    out = bytearray()

    def data(b: bytes) -> None:
        out.extend(b"data %d\n" % len(b) + b + b"\n")

    for c in range(n_commits):
        out += b"commit refs/heads/main\n"
        out += b"committer A <a@example.com> %d +0000\n" % (1700000000 + c)
        data(b"commit %d" % c)
        if c == 0:
            for i in range(n_files):
                out += b"M 100644 inline d%02d/f%04d.py\n" % (i % 50, i)
                data(b"".join(b"value_%d_%d = %d\n" % (i, k, k) for k in range(30)))
        else:
            i = (c * 37) % n_files
            out += b"M 100644 inline d%02d/f%04d.py\n" % (i % 50, i)
            data(b"value_%d = %d\n" % (i, c) * 30)
    out += b"commit refs/heads/agent/big\n"
    out += b"committer A <a@example.com> %d +0000\n" % (1700000000 + n_commits)
    data(b"agent change")
    out += b"from refs/heads/main\n"
    out += b"D d07/f0007.py\n"
    out += b"M 100644 inline d07/renamed.py\n"
    data(b"".join(b"value_7_%d = %d\n" % (k, 33 if k == 3 else k) for k in range(30)))
    out += b"M 100644 inline d11/f0011.py\n"
    data(b"changed\n")
    out += b"M 100644 inline d12/new.py\n"
    data(b"new\n")
    return bytes(out)


def test_large_repository_diff_is_fast(tmp_path: Path) -> None:
    root = tmp_path / "big"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "fast-import", "--quiet", stdin=_fast_import_stream(5000, 500))
    assert git(root, "rev-list", "--count", "main").strip() == "500"
    with GitRepo.open(root) as repo:
        assert len(repo.list_files("main")) == 5000
        timings = []
        for _ in range(3):  # best of three: a loaded machine must not fail it
            t0 = time.perf_counter()
            got = repo.changes("main", "agent/big")
            text = repo.unified_diff("main", "agent/big")
            base = repo.merge_base("main", "agent/big")
            timings.append(time.perf_counter() - t0)
        elapsed = min(timings)
        deep = repo.merge_base("main~499", "agent/big")
    assert [(c.kind, c.path) for c in got] == [
        ("rename", "d07/renamed.py"),
        ("modify", "d11/f0011.py"),
        ("add", "d12/new.py"),
    ]
    assert "rename from d07/f0007.py" in text
    assert base == git(root, "rev-parse", "main").strip()
    assert deep == git(root, "rev-parse", "main~499").strip()
    assert elapsed < 0.3, f"changes+unified_diff+merge_base took {elapsed:.3f}s"


def test_file_ids_name_each_file_by_its_blob(tmp_path: Path) -> None:
    """file_ids lists what list_files lists, each with the id read_blob reads."""
    repo_dir = tmp_path / "ids"
    repo_dir.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo_dir, check=True)
    (repo_dir / "a.txt").write_text("alpha\n")
    (repo_dir / "d").mkdir()
    (repo_dir / "d" / "b.txt").write_text("beta\n")
    subprocess.run(["git", "add", "-A"], cwd=repo_dir, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@x.invalid", "commit", "-qm", "c"], cwd=repo_dir, check=True
    )
    repo = GitRepo.open(repo_dir)
    head = repo.resolve("main")
    ids = repo.file_ids(head)
    assert sorted(ids) == repo.list_files(head) == ["a.txt", "d/b.txt"]
    assert (
        ids["a.txt"]
        == subprocess.run(
            ["git", "rev-parse", "main:a.txt"], cwd=repo_dir, capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    assert [repo.read_blob(ids[p]) for p in sorted(ids)] == [b"alpha\n", b"beta\n"]


def test_nearest_tag_walks_back_to_the_closest_tagged_ancestor(tmp_path: Path) -> None:
    repo_dir = tmp_path / "tags"
    repo_dir.mkdir()

    def run(*a: str) -> None:
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@x.invalid", *a]
        subprocess.run(git, cwd=repo_dir, check=True, capture_output=True)

    run("init", "-q", "-b", "main")
    run("commit", "-q", "--allow-empty", "-m", "one")
    run("tag", "-a", "v1.4.0", "-m", "old")
    run("commit", "-q", "--allow-empty", "-m", "two")
    run("tag", "v1.5.0")
    run("commit", "-q", "--allow-empty", "-m", "three")
    repo = GitRepo.open(repo_dir)
    assert repo.nearest_tag(repo.resolve("main")) == "v1.5.0"
    assert repo.nearest_tag(repo.resolve("main~2")) == "v1.4.0"


def test_a_missing_object_is_one_repo_error_not_a_key_error(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A damaged clone (a loose object deleted): reading, listing and
    exporting say which object is missing and what to run."""
    repo = make_repo({"a.txt": "alpha\n", "dir/b.txt": "beta\n"}, {"a.txt": "changed\n"})
    with GitRepo.open(repo) as git:
        blob = git.file_ids("main")["dir/b.txt"]
        tree = git.tree_sha("main", "dir")
    expected = (
        f"is missing from {repo} (a shallow or damaged clone: run `git fetch --unshallow`, or check it with `git fsck`)"
    )
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    with GitRepo.open(repo) as git:
        for call in (
            lambda: git.read("main", "dir/b.txt"),
            lambda: git.read_blob(blob),
            lambda: git.export("main", tmp_path / "out"),
        ):
            with pytest.raises(RepoError) as caught:
                call()
            assert str(caught.value) == f"object {blob} {expected}"
    (repo / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    with GitRepo.open(repo) as git, pytest.raises(RepoError) as caught:
        git.list_files("main")
    assert str(caught.value) == f"object {tree} {expected}"


def test_big_files_are_paired_when_moved_unchanged_and_not_compared_when_edited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rename detection reads no blob over the size limit (one 200 MB file
    took 14 s and 600 MB): moved unchanged it is still a rename (ids
    match); moved and edited it is a delete and an add."""
    import gatetui.git.diff

    monkeypatch.setattr(gatetui.git.diff, "RENAME_MAX_BYTES", 1000)
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    lines = "".join(f"line {n}\n" for n in range(400))  # about 4 KB: over the limit
    (root / "same.txt").write_text(lines)
    (root / "edited.txt").write_text(lines.replace("line", "row"))
    (root / "small.txt").write_text("one\ntwo\nthree\nfour\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "mv", "same.txt", "same2.txt")
    git(root, "mv", "edited.txt", "edited2.txt")
    git(root, "mv", "small.txt", "small2.txt")
    with open(root / "edited2.txt", "a") as file:
        file.write("one more\n")
    with open(root / "small2.txt", "a") as file:
        file.write("five\n")
    git(root, "commit", "-qam", "move")
    with GitRepo.open(root) as repo:
        got = sorted((c.kind, c.old_path or "", c.new_path or "") for c in repo.changes("HEAD~1", "HEAD"))
    assert got == [
        ("add", "", "edited2.txt"),
        ("delete", "edited.txt", ""),
        ("rename", "same.txt", "same2.txt"),
        ("rename", "small.txt", "small2.txt"),
    ]
