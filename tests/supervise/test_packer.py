"""A submitted commit is read with its submitter's rights, never root's.

The attack: an agent (its own uid) makes a commit whose tree names a blob
it cannot read, but a root reader would follow to: through an alternates file
naming a root-only repository, or a loose object that is a symlink into one.
Gated, the commit's tests could print the blob.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from dulwich.objects import Blob, ShaFile
from dulwich.repo import Repo
from hypothesis import given
from hypothesis import strategies as st

from gatetui.errors import BadInput
from gatetui.supervise.mirror import fetch_commit
from gatetui.supervise.packer import END, read_objects
from tests.support.as_user import locked_install, python_in_lock, run_as
from tests.support.repos import git, write_tree
from tests.support.submitting import AGENT_UID, SECRET

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="reading as another user needs root (CI runs as root)")


def stream(objects: list[ShaFile]) -> bytes:
    return b"".join(b"%d %d\n" % (o.type_num, len(o.as_raw_string())) + o.as_raw_string() for o in objects) + END


@given(st.lists(st.binary(max_size=300), max_size=8))
def test_objects_come_back_with_ids_computed_from_their_bytes(contents: list[bytes]) -> None:
    blobs = [Blob.from_string(c) for c in contents]
    got = list(read_objects(io.BytesIO(stream(blobs))))
    assert [(o.id, o.as_raw_string()) for o in got] == [(b.id, b.as_raw_string()) for b in blobs]


@given(st.binary(max_size=200))
def test_any_bytes_are_objects_or_one_bad_input(data: bytes) -> None:
    try:
        got = list(read_objects(io.BytesIO(data)))
    except BadInput as err:
        assert "\n" not in str(err) and "working copy" in str(err)
    else:
        assert [o.type_num for o in got if o.type_num not in (1, 2, 3, 4)] == []


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"3 10\nshort", "the working copy's objects ended midway"),
        (b"7 1\nx" + END, "the working copy's objects could not be read (object type 7)"),
        (b"3 -1\n", "the working copy's objects could not be read (a malformed record)"),
        (b"3 5\nhello", "the working copy's objects could not be read (a malformed record)"),  # no end
        (b"3 2000\n" + b"x" * 2000 + END, "the working copy's new objects pass 0 MiB: too big to judge"),
    ],
)
def test_a_bad_stream_is_one_line(data: bytes, said: str) -> None:
    with pytest.raises(BadInput) as caught:
        list(read_objects(io.BytesIO(data), limit=1000))
    assert str(caught.value) == said


# --- for real: a uid's working copy, a root-only repository beside it ------------------


class Scene:
    def __init__(self, root: Path):
        self.root = root
        self.supervised = root / "supervised"
        self.secret = root / "secret"
        self.agent = root / "agent"

    def mirror(self, name: str) -> Path:
        return self.root / "state" / name


@pytest.fixture
def scene() -> Iterator[Scene]:
    """/var/tmp (not pytest's 0700 tmp) so the agent's uid can reach its clone."""
    root = Path(tempfile.mkdtemp(prefix="gatetui-packer-", dir="/var/tmp"))
    root.chmod(0o755)
    scene = Scene(root)
    (root / "state").mkdir(mode=0o700)
    for repo, files in ((scene.supervised, {"calc.py": "x = 1\n"}), (scene.secret, {"secret.txt": SECRET})):
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        write_tree(repo, files)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "base")
    scene.secret.chmod(0o700)
    git(root, "clone", "-q", str(scene.supervised), str(scene.agent))
    git(scene.agent, "checkout", "-qb", "agent/x")
    try:
        yield scene
    finally:
        shutil.rmtree(root, ignore_errors=True)


def secret_blob(scene: Scene) -> str:
    return git(scene.secret, "rev-parse", "HEAD:secret.txt")


def commit_naming(scene: Scene, blob: str) -> str:
    """A commit in the agent's clone whose tree holds `blob` as leak.txt."""
    git(scene.agent, "update-index", "--add", "--cacheinfo", f"100644,{blob},leak.txt")
    git(scene.agent, "commit", "-qm", "leak")
    return git(scene.agent, "rev-parse", "HEAD")


def plant_alternates(scene: Scene) -> str:
    alternates = scene.agent / ".git" / "objects" / "info" / "alternates"
    alternates.write_text(f"{scene.secret / '.git' / 'objects'}\n")
    return commit_naming(scene, secret_blob(scene))


def plant_symlink(scene: Scene) -> str:
    blob = secret_blob(scene)
    folder = scene.agent / ".git" / "objects" / blob[:2]
    folder.mkdir(exist_ok=True)
    (folder / blob[2:]).symlink_to(scene.secret / ".git" / "objects" / blob[:2] / blob[2:])
    return commit_naming(scene, blob)


def hand_to_agent(scene: Scene) -> None:
    subprocess.run(["chown", "-R", "--no-dereference", f"{AGENT_UID}:{AGENT_UID}", str(scene.agent)], check=True)


@AS_ROOT
@pytest.mark.parametrize("plant", [plant_alternates, plant_symlink], ids=["alternates", "symlink"])
def test_a_blob_only_root_could_read_is_refused(scene: Scene, plant) -> None:  # type: ignore[no-untyped-def]
    sha = plant(scene)
    hand_to_agent(scene)
    blob = secret_blob(scene).encode()
    with pytest.raises(BadInput) as caught:
        fetch_commit(scene.mirror("as-agent"), scene.supervised, "main", scene.agent, sha, as_uid=AGENT_UID)
    assert (
        str(caught.value)
        == "cannot read the commit from the working copy as its owner: "
        + {
            "alternates": f"{scene.secret}/.git/objects/pack is not readable by the submitting user",
            "symlink": f"{scene.agent}/.git/objects/{blob[:2].decode()}/{blob[2:].decode()} is not readable by the "
            "submitting user",
        }[plant.__name__.removeprefix("plant_")]
    )
    with Repo(str(scene.mirror("as-agent"))) as mirror:
        assert (sha.encode() in mirror.object_store, blob in mirror.object_store) == (False, False)
    # what the uid's rights protect against: root's own read takes the secret in
    fetch_commit(scene.mirror("as-root"), scene.supervised, "main", scene.agent, sha)
    with Repo(str(scene.mirror("as-root"))) as mirror:
        assert mirror.object_store[blob].as_raw_string().decode() == SECRET


@AS_ROOT
def test_the_agents_own_commit_is_read_as_the_agent(scene: Scene) -> None:
    write_tree(scene.agent, {"calc.py": "x = 2\n", "tests/test_calc.py": "def test_x():\n    pass\n"})
    git(scene.agent, "add", "-A")
    git(scene.agent, "commit", "-qm", "change")
    sha = git(scene.agent, "rev-parse", "HEAD")
    hand_to_agent(scene)
    fetch_commit(scene.mirror("m"), scene.supervised, "main", scene.agent, sha, as_uid=AGENT_UID)
    with Repo(str(scene.mirror("m"))) as mirror:
        tree = mirror.object_store[mirror.object_store[sha.encode()].tree]
        assert sorted(name.decode() for name, _, _ in tree.iteritems()) == ["calc.py", "tests"]
        assert mirror.object_store[tree[b"calc.py"][1]].as_raw_string() == b"x = 2\n"


def own_change(scene: Scene) -> str:
    write_tree(scene.agent, {"calc.py": "x = 2\n", "tests/test_calc.py": "def test_x():\n    pass\n"})
    git(scene.agent, "add", "-A")
    git(scene.agent, "commit", "-qm", "change")
    git(scene.agent, "gc", "-q")  # packed: the reader's pack code runs too
    return git(scene.agent, "rev-parse", "HEAD")


@AS_ROOT
@pytest.mark.parametrize(
    "plant, said",
    [
        (own_change, "read calc.py tests"),
        (
            plant_alternates,
            "refused: cannot read the commit from the working copy as its owner: {secret}/.git/objects/pack "
            "is not readable by the submitting user",
        ),
    ],
    ids=["own-commit", "alternates"],
)
def test_the_reader_needs_nothing_the_agent_can_read(scene: Scene, plant, said: str) -> None:  # type: ignore[no-untyped-def]
    """gatetui and its interpreter installed where the agent's uid cannot go
    (root's 0700 home): the commit is still read, and read as the agent."""
    sha = plant(scene)
    hand_to_agent(scene)
    code = (
        "from pathlib import Path\nfrom gatetui.errors import BadInput\nfrom gatetui.supervise.mirror import fetch_commit\n"
        "from dulwich.repo import Repo\n"
        f"mirror = Path({str(scene.mirror('locked'))!r})\n"
        "try:\n"
        f"    fetch_commit(mirror, Path({str(scene.supervised)!r}), 'main', Path({str(scene.agent)!r}), "
        f"{sha!r}, as_uid={AGENT_UID})\n"
        "except BadInput as err:\n    print('refused:', err)\n"
        "else:\n"
        "    with Repo(str(mirror)) as repo:\n"
        f"        tree = repo.object_store[repo.object_store[{sha.encode()!r}].tree]\n"
        "        print('read', *sorted(name.decode() for name, _, _ in tree.iteritems()))\n"
    )
    with locked_install() as lock:
        done = python_in_lock(lock, code, agent_uid=AGENT_UID)
    assert (done.returncode, done.stdout, done.stderr) == (0, said.format(secret=scene.secret) + "\n", "")


@AS_ROOT
def test_a_supervisor_that_is_not_root_refuses_another_users_copy() -> None:
    """Run as a plain user, it cannot take the submitter's rights: it says so."""
    code = (
        "try:\n    _submit_fields({'branch': 'b', 'head': 'a' * 40, 'repo': '/var/tmp'}, 4242)\n"
        "except Exception as err:\n    print(err)\n"
    )
    done = run_as(
        AGENT_UID, "from gatetui.supervise.serve import _submit_fields\n" + code, imports=["gatetui.supervise.serve"]
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "this supervisor cannot read another user's working copy with that user's rights: "
        "run `gatetui serve` as root, or submit as the user who runs it\n",
        "",
    )
