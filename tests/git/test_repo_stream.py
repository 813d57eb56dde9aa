"""Blobs read as streams give dulwich's bytes exactly, packed or loose,
whole or deltified, and a big file never sits whole in the gate's memory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from dulwich.repo import Repo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gatetui.git.stream import blob_chunks, blob_size
from tests.support.repos import git


def _versions_repo(root: Path, versions: list[bytes], pack: bool) -> Path:
    """A repo whose one file went through `versions`, one commit each; with
    `pack`, repacked so that git stores later versions as deltas."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for number, data in enumerate(versions):
        (repo / "f.bin").write_bytes(data)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"v{number}", "--allow-empty")
    if pack:
        git(repo, "repack", "-adf", "--depth=50", "--window=50")
    return repo


def _every_blob(repo: Path) -> list[tuple[bytes, bytes]]:
    with Repo(str(repo)) as opened:
        store = opened.object_store
        return [(sha, store[sha].as_raw_string()) for sha in store if store[sha].type_name == b"blob"]


def _streamed(repo: Path, sha: bytes) -> tuple[int, bytes]:
    with Repo(str(repo)) as opened:
        store = opened.object_store

        def refuse(missing: bytes) -> bytes:
            raise AssertionError(f"read whole: {missing!r}")  # every object here is streamable

        return blob_size(store, sha, refuse), b"".join(blob_chunks(store, sha, refuse))


edits = st.lists(st.tuples(st.integers(0, 4000), st.integers(0, 200), st.binary(max_size=300)), min_size=1, max_size=6)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=st.binary(min_size=0, max_size=6000), changes=edits, pack=st.booleans())
def test_a_streamed_blob_is_dulwichs_blob(tmp_path_factory, start: bytes, changes, pack: bool) -> None:  # type: ignore[no-untyped-def]
    versions, data = [start], start
    for at, cut, insert in changes:
        at = min(at, len(data))
        data = data[:at] + insert + data[at + cut :]
        versions.append(data)
    repo = _versions_repo(tmp_path_factory.mktemp("stream"), versions, pack)
    for sha, whole in _every_blob(repo):
        assert _streamed(repo, sha) == (len(whole), whole)


def test_a_deltified_big_file_is_rebuilt_from_its_base(tmp_path: Path) -> None:
    """Copies longer than a chunk and a base that is itself a delta."""
    first = bytes(range(256)) * 20_000  # 5 MB, compressible, so git deltifies the next versions
    second = first[:3_000_000] + b"an edit" + first[3_000_000:]
    third = b"head" + second[:-10]
    repo = _versions_repo(tmp_path, [first, second, third], pack=True)
    counts = subprocess.run(
        ["git", "-C", str(repo), "verify-pack", "-v", *map(str, (repo / ".git/objects/pack").glob("*.idx"))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert " 1 " in counts or "chain length = 1" in counts  # at least one blob is a delta
    wanted = {len(v): v for v in (first, second, third)}
    for sha, whole in _every_blob(repo):
        if len(whole) in wanted:
            assert _streamed(repo, sha) == (len(whole), wanted[len(whole)])


def test_a_damaged_loose_object_is_an_error_not_short_bytes(tmp_path: Path) -> None:
    repo = _versions_repo(tmp_path, [b"x" * 100_000], pack=False)
    ((sha, _),) = _every_blob(repo)
    path = repo / ".git/objects" / sha[:2].decode() / sha[2:].decode()
    raw = path.read_bytes()
    path.chmod(0o644)
    path.write_bytes(raw[: len(raw) // 2])
    with Repo(str(repo)) as opened:
        try:
            b"".join(blob_chunks(opened.object_store, sha, lambda missing: b""))
        except ValueError as err:
            assert "ends inside an object" in str(err)
        else:
            raise AssertionError("a cut object streamed without an error")


MEMORY_PROBE = """
import sys
from pathlib import Path
from gatetui.gate.plan import GateRequest, make_plan
plan = make_plan(GateRequest(Path(sys.argv[1]), "main", "agent/x"))
plan.repo.export(plan.head.sha, Path(sys.argv[2]))
status = Path("/proc/self/status").read_text()  # the peak of this program (getrusage's outlives exec)
print(int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) // 1024)
"""


def test_a_200_mb_file_changed_and_moved_never_sits_whole_in_memory(tmp_path: Path) -> None:
    """The gate's plan (the diff, renames detected) and the export of a tree
    holding a 200 MB file, edited and moved at head, packed as a delta of
    base's: the supervisor's peak stays under 150 MB (it was 1 GB)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    big = (bytes(range(256)) * 4096) * 200  # 200 MiB, compressible: fast to pack, deltified
    (repo / "data.bin").write_bytes(big)
    (repo / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n')
    (repo / "tests").mkdir()
    (repo / "tests/test_p.py").write_text("def test_p():\n    assert True\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "agent/x")
    (repo / "data.bin").rename(repo / "moved.bin")
    with open(repo / "moved.bin", "ab") as file:
        file.write(b"one more line\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "head")
    git(repo, "repack", "-adq")
    done = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, str(repo), str(tmp_path / "out")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "out/moved.bin").stat().st_size == len(big) + 14
    assert int(done.stdout) < 150, f"peak {done.stdout.strip()} MB reading a 200 MiB file"
