"""The supervisor writes nothing through a link: opens beneath a tree's top
folder (openat2, or the O_NOFOLLOW walk where the kernel has none), a link
at any depth of a written path replaced by a real folder, and the links
head committed out of the tree named by the gate from git alone.

The trees here are built as head and its tests would leave them: a link as
the first folder of a sealed path, as a middle folder, as the file itself;
pointing outside (an absolute path), at `..`, and at a folder inside the
tree. Each time the folder outside is listed before and after."""

from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path

import pytest

from gatetui.backends import beneath
from gatetui.backends.beneath import in_the_way, open_beneath, open_folder
from gatetui.backends.local_files import read_regular, write_files
from gatetui.errors import BackendError
from gatetui.gate.sealing.links import links_out
from gatetui.git.export import write_extra
from gatetui.git.repo import GitRepo
from tests.support.repos import git
from tests.support.trees import listing

SEALED = "tests/unit/test_x.py"
DEPTHS = {"first folder": "tests", "middle folder": "tests/unit", "the file itself": SEALED}
INSIDE = {"first folder": "spec", "middle folder": "../spec/unit", "the file itself": "../../spec/unit/test_x.py"}
UID = 4242


@pytest.fixture(params=["openat2", "walk"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test both ways: the syscall, and the walk kept for kernels without it."""
    if request.param == "openat2" and not beneath.has_openat2():
        pytest.skip("this kernel has no openat2")
    if request.param == "walk":
        monkeypatch.setattr(beneath, "has_openat2", lambda: False)
    return str(request.param)


def planted(tmp_path: Path, depth: str, target: str) -> tuple[Path, Path, str]:
    """A tree with head's spec/ folder and a link at `depth` of the sealed
    path; the outside folder (a canary in it); the link's text."""
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    for folder in (tree / "spec" / "unit", tree / "tests" / "unit", outside / "unit"):
        folder.mkdir(parents=True)
    (tree / "spec" / "unit" / "test_x.py").write_bytes(b"head's\n")
    (tree / "spec" / "test_x.py").write_bytes(b"head's\n")
    (outside / "canary").write_bytes(b"host\n")
    (outside / "unit" / "test_x.py").write_bytes(b"host\n")
    (outside / "test_x.py").write_bytes(b"host\n")
    link = tree / DEPTHS[depth]
    text = {"absolute": str(outside), "dotdot": "..", "inside": INSIDE[depth]}[target]
    if link.is_dir():
        shutil.rmtree(link)
    link.symlink_to(text)
    return tree, outside, text


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("target", ["absolute", "dotdot", "inside"])
def test_a_sealed_file_lands_in_real_folders_and_nothing_goes_through_the_link(
    tmp_path: Path, way: str, depth: str, target: str
) -> None:
    tree, outside, _ = planted(tmp_path, depth, target)
    before = listing(tmp_path / "outside"), listing(tree / "spec"), sorted(os.listdir(tmp_path))
    write_files(
        tree,
        {SEALED: b"base's\n", "tests/conftest.py": b"base's conftest\n"},
        False,
        UID if os.geteuid() == 0 else None,
    )
    assert (listing(tmp_path / "outside"), listing(tree / "spec"), sorted(os.listdir(tmp_path))) == before
    assert listing(tree / "tests") == {
        "conftest.py": b"base's conftest\n",
        "unit": b"<folder>",
        "unit/test_x.py": b"base's\n",
    }  # real folders, no link left
    assert stat.S_ISREG(os.lstat(tree / SEALED).st_mode)
    if os.geteuid() == 0:  # chowned through its own handle: the file, not what a link named
        made = [DEPTHS[depth], SEALED] if depth != "the file itself" else [SEALED]
        assert {os.lstat(tree / rel).st_uid for rel in made} == {UID}
        assert os.lstat(outside / "unit" / "test_x.py").st_uid == 0


@pytest.mark.parametrize("whiteouts", [False, True])
def test_a_deletion_under_a_link_deletes_nothing_outside(tmp_path: Path, way: str, whiteouts: bool) -> None:
    tree, outside, _ = planted(tmp_path, "middle folder", "absolute")
    before = listing(outside)
    write_files(tree, {SEALED: None}, whiteouts)
    assert listing(outside) == before
    if whiteouts:  # an overlay layer's deletion: a 0/0 character device in a real folder
        assert stat.S_ISCHR(os.lstat(tree / SEALED).st_mode) and not (tree / "tests" / "unit").is_symlink()
    else:
        assert not os.path.lexists(tree / SEALED) and not (tree / "tests" / "unit").is_symlink()


def test_a_folder_at_the_files_place_and_a_file_at_a_folders_place_give_way(tmp_path: Path, way: str) -> None:
    tree = tmp_path / "tree"
    (tree / "tests" / "test_x.py" / "deep").mkdir(parents=True)
    (tree / "tests" / "test_x.py" / "deep" / "f").write_text("head's\n")
    (tree / "gate").write_text("head's file\n")
    write_files(tree, {"tests/test_x.py": b"base's\n", "gate/plugin.py": b"gate's\n"}, False)
    assert listing(tree) == {
        "gate": b"<folder>",
        "gate/plugin.py": b"gate's\n",
        "tests": b"<folder>",
        "tests/test_x.py": b"base's\n",
    }


@pytest.mark.parametrize("whiteouts", [False, True])
def test_a_link_that_is_itself_a_deleted_sealed_path_still_makes_room_for_base_s_file(
    tmp_path: Path, way: str, whiteouts: bool
) -> None:
    """A sealed glob (tests/**) matches head's link tests/unit, which base
    lacks: the old-tests overlay deletes it and writes a file below it, in
    whatever order its mapping holds them."""
    tree, outside, _ = planted(tmp_path, "middle folder", "absolute")
    before = listing(outside)
    write_files(tree, {SEALED: b"base's\n", "tests/unit": None}, whiteouts)
    assert listing(outside) == before
    assert listing(tree / "tests") == {"unit": b"<folder>", "unit/test_x.py": b"base's\n"}


def test_a_path_out_of_the_tree_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for rel in ("../escape.py", "/etc/escape.py", "a//b.py", "./a.py", ""):
        with pytest.raises(BackendError, match="refusing to write outside the workspace"):
            write_files(tree, {rel: b"x"}, False)
    assert listing(tmp_path) == {"tree": b"<folder>"}


@pytest.mark.parametrize("depth", DEPTHS)
def test_open_beneath_stops_at_a_link_at_any_depth(tmp_path: Path, way: str, depth: str) -> None:
    tree, _, _ = planted(tmp_path, depth, "absolute")
    top = open_folder(str(tree))
    try:
        for rel in (DEPTHS[depth], SEALED):  # the link itself, and a path through it (or ending at it)
            with pytest.raises(OSError) as refused:
                os.close(open_beneath(top, rel, os.O_RDONLY))
            assert in_the_way(refused.value)
        for bad in ("../outside/canary", "spec/../../outside/canary", "/etc/hostname"):
            with pytest.raises(OSError) as out:
                os.close(open_beneath(top, bad, os.O_RDONLY))
            assert out.value.errno == errno.EXDEV
        fd = open_beneath(top, "spec/unit/test_x.py", os.O_RDONLY)
        with os.fdopen(fd, "rb") as handle:
            assert handle.read() == b"head's\n"
    finally:
        os.close(top)


def test_openat2_itself_refuses_a_link_with_eloop(tmp_path: Path) -> None:
    """The syscall by hand really is openat2 with RESOLVE_NO_SYMLINKS: a
    plain openat with O_NOFOLLOW would follow the folder link and succeed."""
    if not beneath.has_openat2():
        pytest.skip("this kernel has no openat2")
    tree, _, _ = planted(tmp_path, "first folder", "absolute")
    top = open_folder(str(tree))
    try:
        os.close(os.open("tests/canary", os.O_RDONLY | os.O_NOFOLLOW, dir_fd=top))  # what openat does
        with pytest.raises(OSError) as refused:
            beneath.openat2(top, "tests/canary", os.O_RDONLY)
        assert refused.value.errno == errno.ELOOP
    finally:
        os.close(top)


def test_a_report_is_read_only_if_it_is_a_regular_file_in_its_folder(tmp_path: Path, way: str) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    (tmp_path / "secret").write_bytes(b"key\n")
    (folder / "planted.xml").symlink_to(tmp_path / "secret")
    os.mkfifo(folder / "fifo.xml")
    (folder / "ok.xml").write_bytes(b"<testsuite/>")
    assert [read_regular(folder, n) for n in ("planted.xml", "fifo.xml", "ok.xml", "absent.xml")] == [
        None,
        None,
        b"<testsuite/>",
        None,
    ]


# --- the gate's finding, from git alone ---------------------------------------


def found(links: dict[str, str], written: list[str], files: tuple[str, ...] = ()) -> list[str]:
    entries = set(links) | set(files)
    return [
        f.path for f in links_out(written, entries.__contains__, lambda p: links[p].encode() if p in links else None)
    ]


@pytest.mark.parametrize(
    ("links", "named"),
    [
        ({"tests": "/tmp/outside"}, ["tests"]),
        ({"tests": "../../.."}, ["tests"]),
        ({"tests": ".."}, ["tests"]),
        ({"tests/unit": "/srv"}, ["tests/unit"]),
        ({"tests/unit": "../../elsewhere"}, ["tests/unit"]),
        ({"tests": "a", "a": "/etc"}, ["tests"]),  # inside, yet to a link that leaves
        ({"tests": "spec"}, []),  # an honest move: base's tests judge it
        ({"tests/unit": "../spec"}, []),
        ({"tests": "."}, []),
        ({"tests": "a", "a": "tests"}, []),  # a loop: nothing outside
        ({SEALED: "/etc/passwd"}, []),  # the file itself: replaced, never followed, no folder went through it
    ],
)
def test_links_out_of_the_tree_on_the_way_to_a_written_path_are_named(links: dict[str, str], named: list[str]) -> None:
    assert found(links, [SEALED, "tests/conftest.py"]) == named


def test_a_link_out_of_the_tree_off_the_written_paths_is_not_the_gates_business() -> None:
    assert found({"docs": "/etc", "tests": "/tmp"}, ["spec/test_x.py"], ("spec/test_x.py",)) == []


def test_the_finding_says_the_link_its_target_and_the_sealed_path() -> None:
    [finding] = links_out([SEALED], {"tests"}.__contains__, lambda p: b"/tmp/outside-1" if p == "tests" else None)
    assert str(finding) == (
        "head committed tests as a link out of the tree (-> /tmp/outside-1) where base's "
        f"{SEALED} lies: nothing was written through it, base's files went into a real "
        "folder there (tests)"
    )


def test_link_target_reads_a_committed_link_and_nothing_else(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "spec").mkdir()
    (repo / "spec" / "a.py").write_text("x\n")
    (repo / "tests").symlink_to("/tmp/outside")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "c")
    opened = GitRepo.open(repo)
    sha = opened.resolve("main")
    assert [opened.link_target(sha, p) for p in ("tests", "spec", "spec/a.py", "absent")] == [
        b"/tmp/outside",
        None,
        None,
        None,
    ]


def test_the_exports_extra_files_never_go_through_a_committed_link(tmp_path: Path) -> None:
    """A version file the build writes by design, at a path head made a link."""
    repo, outside, dest = tmp_path / "repo", tmp_path / "outside", tmp_path / "dest"
    repo.mkdir()
    outside.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "pkg").symlink_to(outside)
    (repo / "deep").mkdir()
    (repo / "deep" / "sub").symlink_to("../..")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "c")
    opened = GitRepo.open(repo)
    opened.export(opened.resolve("main"), dest)
    write_extra(dest, {"pkg/_version.py": b"v = 1\n", "deep/sub/_version.py": b"v = 1\n"})
    assert listing(outside) == {} and not (tmp_path / "_version.py").exists()
    assert listing(dest) == {"deep": b"<folder>", "deep/sub": b"../..", "pkg": str(outside).encode()}
