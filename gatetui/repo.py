"""Read-only access to the user's git repository, through dulwich.

gatetui judges a change from a base ref to a head ref in a repository that
belongs to the user.  Everything here only *reads*: no checkout, no ref or
index update, no object written, no lock file taken.  Objects are read with
dulwich (never a `git` subprocess), and contents are returned as raw bytes
(no end-of-line conversion, no filters, no LFS smudging).

Paths inside the repository are posix strings relative to the top level,
decoded from the tree's bytes with `os.fsdecode` (UTF-8, undecodable bytes
kept as surrogate escapes so they round-trip).

A commit whose tree holds an entry git itself would refuse to check out
(a name that is empty, ".", "..", contains "/", or is ".git" in any case) is
refused wherever paths are handed out or written, so that no caller ever
joins a hostile path onto a folder.
"""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
import os
import re
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from dulwich.diff_tree import RenameDetector, tree_changes
from dulwich.errors import NotGitRepository
from dulwich.graph import find_merge_base
from dulwich.objects import Blob, ShaFile, Tag, Tree
from dulwich.objects import Commit as _DCommit
from dulwich.refs import SymrefLoop, check_ref_format
from dulwich.repo import Repo

from .changes import FileChange
from .errors import BadInput

try:  # private in dulwich, but stable for a decade; only used for the header
    from dulwich.diff_tree import _similarity_score
except ImportError:  # pragma: no cover - depends on the dulwich version
    _similarity_score = None

__all__ = ["Commit", "GitRepo", "RepoError", "digest_files"]

# Renames are detected at >= 50% similarity, as `git diff -M` does.  dulwich
# keeps a pair when `score > threshold`, hence 49.
_RENAME_THRESHOLD = 49
# git: a blob is binary when a NUL appears in its first 8000 bytes.
_BINARY_PROBE = 8000
_CONTEXT = 3
_ABBREV = 7
_MIN_SHORT_SHA = 4
_MAX_TAG_DEPTH = 32
_DIFF_LIMIT_LINES = 5000  # above this, difflib may use its "autojunk" heuristic

_S_IFGITLINK = 0o160000
_TOP_LEVEL_REF = re.compile(r"[A-Z][A-Z_]*\Z")
_HEX = re.compile(r"[0-9a-fA-F]+\Z")
_SUFFIX = re.compile(r"\^\{(?:commit)?\}|(~|\^)(\d*)")


class RepoError(BadInput):
    """One-line, user-facing message naming what is wrong and what to do.

    A `BadInput` (itself an `Exception`), so the CLI prints the line and exits
    with the "bad input" code: not a repository, unknown ref, unsafe tree.
    """


@dataclass(frozen=True)
class Commit:
    """The few facts about a commit that gatetui shows."""

    sha: str
    short: str
    summary: str  # first line of the message
    author: str  # "Name <email>", as recorded
    time: int  # commit time, seconds since the epoch


@dataclass(frozen=True)
class _Entry:
    path: bytes
    mode: int
    sha: bytes


# A change as (kind, old, new); kind is "add", "delete", "modify" or "rename".
_Change = tuple[str, "_Entry | None", "_Entry | None"]


def digest_files(files: Mapping[str, bytes]) -> str:
    """Name a set of files: sha256 hex over the sorted (path, content) pairs.

    Every path and content is length-prefixed, so no two different sets can
    frame to the same byte stream ({"ab": b"c"} differs from {"a": b"bc"}).
    """
    items = sorted(
        (path.encode("utf-8", "surrogateescape"), bytes(data))
        for path, data in files.items()
    )
    h = hashlib.sha256(b"gatetui.files.v1\0")
    h.update(len(items).to_bytes(8, "big"))
    for path, data in items:
        h.update(len(path).to_bytes(8, "big"))
        h.update(path)
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


class GitRepo:
    """A git repository opened read-only.  Use `GitRepo.open(path)`."""

    def __init__(self, repo: Repo, path: Path) -> None:
        self._repo = repo
        self._store = repo.object_store
        self.path = path
        self._hexlen = repo.object_format.hex_length

    # ------------------------------------------------------------------ open

    @classmethod
    def open(cls, path: str | Path) -> GitRepo:
        """Open the repository whose top-level folder (or bare folder) is `path`."""
        given = Path(path).expanduser()
        if not given.exists():
            raise RepoError(
                f"no such folder: {given} (pass the repository's top-level folder)"
            )
        if not given.is_dir():
            raise RepoError(
                f"not a folder: {given} (pass the repository's top-level folder)"
            )
        where = given.resolve()
        try:
            repo = Repo(str(where))
        except NotGitRepository:
            top = _enclosing_repo(where)
            if top is not None:
                raise RepoError(
                    f"{where} is inside the git repository at {top}: "
                    f"pass the top-level folder {top}"
                ) from None
            raise RepoError(
                f"not a git repository: {where} (run `git init` or pass the "
                "repository's top-level folder)"
            ) from None
        except Exception as exc:  # unsupported format, unreadable config, ...
            raise RepoError(
                f"cannot read the git repository at {where}: {_one_line(exc)} "
                "(check it with `git status`)"
            ) from None
        return cls(repo, Path(repo.path).resolve())

    def close(self) -> None:
        """Release the pack files dulwich keeps open."""
        self._repo.close()

    def __del__(self) -> None:
        # A forgotten close() must not leak open packs (dulwich would warn).
        repo = getattr(self, "_repo", None)
        if repo is not None:
            try:
                repo.close()
            except Exception:  # pragma: no cover - interpreter shutdown
                pass

    def __enter__(self) -> GitRepo:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"GitRepo({str(self.path)!r})"

    # --------------------------------------------------------------- resolve

    def resolve(self, ref: str) -> str:
        """The full hex sha of the commit `ref` names.

        Accepts a full or short (>= 4 hex digits) sha, a branch ("main",
        "agent/fix", "refs/heads/x"), a tag (annotated tags are peeled), a
        remote-tracking ref ("origin/main", "refs/remotes/origin/main"),
        "HEAD", and git's `~N`, `^N` and `^{commit}` suffixes ("HEAD~2",
        "main^2").
        """
        if not isinstance(ref, str) or not ref or ref != ref.strip():
            raise RepoError(
                f"unknown ref {ref!r} in {self.path}: "
                "no branch, tag or commit by that name"
            )
        cut = min((i for i in (ref.find("~"), ref.find("^")) if i >= 0), default=-1)
        name, suffix = (ref, "") if cut < 0 else (ref[:cut], ref[cut:])
        if not name:
            raise RepoError(
                f"unknown ref {ref!r} in {self.path}: no branch, tag or commit "
                "by that name"
            )
        sha = self._resolve_name(name, ref)
        pos = 0
        while pos < len(suffix):
            m = _SUFFIX.match(suffix, pos)
            if m is None:
                raise RepoError(
                    f"unknown ref {ref!r} in {self.path}: cannot read "
                    f"{suffix[pos:]!r} (use NAME, NAME~N or NAME^N)"
                )
            op, digits = m.group(1), m.group(2)
            n = int(digits) if digits else 1
            if op is None:  # ^{} or ^{commit}: sha already names a commit
                pass
            elif op == "~":
                for _ in range(n):
                    sha = self._parent(sha, 1, ref)
            elif n:
                sha = self._parent(sha, n, ref)
            pos = m.end()
        return sha

    def _resolve_name(self, name: str, ref: str) -> str:
        if name == "@":
            name = "HEAD"
        is_hex = bool(_HEX.match(name))
        if is_hex and len(name) == self._hexlen:
            sha = name.lower().encode("ascii")
            if sha in self._store:
                return self._peel_to_commit(sha, ref)
        for candidate in _ref_candidates(name):
            target = self._read_ref(candidate)
            if target is not None:
                return self._peel_to_commit(target, ref)
        if is_hex and _MIN_SHORT_SHA <= len(name) < self._hexlen:
            found = self._resolve_short(name.lower(), ref)
            if found is not None:
                return found
        hint = ""
        if not self._repo.refs.as_dict(b"refs/heads/") and name == "HEAD":
            hint = " (the repository has no commits yet)"
        elif is_hex and len(name) < _MIN_SHORT_SHA:
            hint = f" (a short sha needs at least {_MIN_SHORT_SHA} characters)"
        raise RepoError(
            f"unknown ref {ref!r} in {self.path}: no branch, tag or commit by "
            f"that name{hint}"
        )

    def _read_ref(self, name: bytes) -> bytes | None:
        try:
            _chain, value = self._repo.refs.follow(name)
        except (SymrefLoop, KeyError, OSError, ValueError):
            return None
        if value is None:
            return None
        value = bytes(value).strip()[: self._hexlen]
        if len(value) != self._hexlen or not _HEX.match(value.decode("latin-1")):
            return None
        return value.lower()

    def _resolve_short(self, prefix: str, ref: str) -> str | None:
        try:
            matches = sorted(set(self._store.iter_prefix(prefix.encode("ascii"))))
        except (KeyError, OSError, ValueError):
            matches = []
        commits: set[str] = set()
        kinds: list[str] = []
        for sha in matches:
            obj = self._peel(sha)
            if isinstance(obj, _DCommit):
                commits.add(obj.id.decode("ascii"))
            elif obj is not None:
                kinds.append(obj.type_name.decode("ascii"))
        if len(commits) == 1:
            return commits.pop()
        if len(commits) > 1:
            raise RepoError(
                f"ambiguous short sha {ref!r} in {self.path}: {len(commits)} "
                "commits start with it; give more characters"
            )
        if kinds:
            raise RepoError(
                f"ref {ref!r} in {self.path} names a {kinds[0]}, not a commit"
            )
        return None

    def _peel(self, sha: bytes) -> ShaFile | None:
        """The object `sha` names, with tags followed; None when missing."""
        try:
            obj = self._store[sha]
            for _ in range(_MAX_TAG_DEPTH):
                if not isinstance(obj, Tag):
                    return obj
                obj = self._store[obj.object[1]]
        except (KeyError, ValueError, OSError):
            return None
        return None

    def _peel_to_commit(self, sha: bytes, ref: str) -> str:
        obj = self._peel(sha)
        if obj is None:
            raise RepoError(
                f"ref {ref!r} in {self.path} points to a missing object "
                f"{sha.decode('ascii')} (the repository may be shallow or "
                "damaged; check it with `git fsck`)"
            )
        if not isinstance(obj, _DCommit):
            raise RepoError(
                f"ref {ref!r} in {self.path} names a "
                f"{obj.type_name.decode('ascii')}, not a commit"
            )
        return obj.id.decode("ascii")

    def _parent(self, sha: str, n: int, ref: str) -> str:
        parents = self._commit_obj(sha).parents
        if len(parents) < n:
            raise RepoError(
                f"unknown ref {ref!r} in {self.path}: commit {sha[:_ABBREV]} "
                f"has {len(parents)} parent(s), not {n}"
            )
        return parents[n - 1].decode("ascii")

    # --------------------------------------------------------------- commits

    def _commit_obj(self, rev: str) -> _DCommit:
        if _is_full_sha(rev, self._hexlen):  # the fast path: a commit's sha
            try:
                obj = self._store[rev.lower().encode("ascii")]
            except KeyError:
                obj = None
            if isinstance(obj, _DCommit):
                return obj
        obj = self._store[self.resolve(rev).encode("ascii")]
        assert isinstance(obj, _DCommit)
        return obj

    def commit(self, sha: str) -> Commit:
        """Facts about the commit `sha` (any ref `resolve` accepts)."""
        c = self._commit_obj(sha)
        encoding = (c.encoding or b"utf-8").decode("ascii", "replace")
        try:
            message = c.message.decode(encoding, "replace")
        except LookupError:
            message = c.message.decode("utf-8", "replace")
        lines = message.strip().splitlines()
        hexsha = c.id.decode("ascii")
        return Commit(
            sha=hexsha,
            short=hexsha[:_ABBREV],
            summary=lines[0].strip() if lines else "",
            author=c.author.decode("utf-8", "replace"),
            time=int(c.commit_time),
        )

    def merge_base(self, a: str, b: str) -> str | None:
        """The best common ancestor of `a` and `b`; None when they share none."""
        ca = self._commit_obj(a).id
        cb = self._commit_obj(b).id
        try:
            bases = find_merge_base(self._repo, [ca, cb])
        except KeyError as exc:
            raise RepoError(
                f"cannot find the merge base of {a!r} and {b!r} in {self.path}: "
                f"object {_missing(exc)} is missing (the repository may be "
                "shallow; run `git fetch --unshallow`)"
            ) from None
        return bases[0].decode("ascii") if bases else None

    # ----------------------------------------------------------------- diffs

    def _tree_id(self, rev: str) -> bytes:
        return self._commit_obj(rev).tree

    def _raw_changes(self, base: str, head: str) -> list[_Change]:
        old_tree = self._tree_id(base)
        new_tree = self._tree_id(head)
        if old_tree == new_tree:
            return []
        detector = RenameDetector(self._store, rename_threshold=_RENAME_THRESHOLD)
        out: list[_Change] = []
        try:
            raw = tree_changes(
                self._store, old_tree, new_tree, rename_detector=detector
            )
            for change in raw:
                old = _entry(change.old)
                new = _entry(change.new)
                kind = change.type
                if kind == "copy":  # the source still exists: an add for us
                    kind, old = "add", None
                if kind == "unchanged" or (old is None and new is None):
                    continue
                if old is None:
                    kind = "add"
                elif new is None:
                    kind = "delete"
                elif kind not in ("modify", "rename"):
                    kind = "modify"
                for e in (old, new):
                    if e is not None:
                        self._check_tree_path(e.path, base if e is old else head)
                out.append((kind, old, new))
        except KeyError as exc:
            raise RepoError(
                f"cannot diff {base!r}..{head!r} in {self.path}: object "
                f"{_missing(exc)} is missing (the repository may be shallow "
                "or damaged; check it with `git fsck`)"
            ) from None
        out.sort(key=_change_order)
        return out

    def changes(self, base: str, head: str) -> list[FileChange]:
        """Every file that differs from `base` to `head`, renames detected.

        Sorted by path.  Contents are raw bytes; a symlink's data is its
        target.  Submodule entries are skipped.  A path whose type changed
        (file <-> symlink) is one "modify" record.
        """
        raw = self._raw_changes(base, head)
        result: list[FileChange] = []
        i = 0
        while i < len(raw):
            kind, old, new = raw[i]
            nxt = raw[i + 1] if i + 1 < len(raw) else None
            if (
                kind == "delete"
                and nxt is not None
                and nxt[0] == "add"
                and old is not None
                and nxt[2] is not None
                and nxt[2].path == old.path
            ):
                kind, new = "modify", nxt[2]
                i += 1
            result.append(
                FileChange(
                    kind=kind,  # type: ignore[arg-type]
                    old_path=_decode(old.path) if old else None,
                    new_path=_decode(new.path) if new else None,
                    old_data=self._blob_data(old.sha) if old else None,
                    new_data=self._blob_data(new.sha) if new else None,
                )
            )
            i += 1
        return result

    def unified_diff(self, base: str, head: str) -> str:
        """`git diff -M base head` style text (3 lines of context)."""
        parts: list[bytes] = []
        for kind, old, new in self._raw_changes(base, head):
            parts.append(self._file_diff(kind, old, new))
        return b"".join(parts).decode("utf-8", "replace")

    def _file_diff(self, kind: str, old: _Entry | None, new: _Entry | None) -> bytes:
        a_path = (old or new).path  # type: ignore[union-attr]
        b_path = (new or old).path  # type: ignore[union-attr]
        out = [b"diff --git " + _quote(b"a/", a_path) + b" " + _quote(b"b/", b_path)]
        if old is None and new is not None:
            out.append(b"new file mode %06o" % new.mode)
        elif new is None and old is not None:
            out.append(b"deleted file mode %06o" % old.mode)
        else:
            assert old is not None and new is not None
            if old.mode != new.mode:
                out.append(b"old mode %06o" % old.mode)
                out.append(b"new mode %06o" % new.mode)
            if kind == "rename":
                out.append(b"similarity index %d%%" % self._similarity(old, new))
                out.append(b"rename from " + _quote(b"", old.path))
                out.append(b"rename to " + _quote(b"", new.path))
        zero = b"0" * _ABBREV
        old_sha = old.sha if old else None
        new_sha = new.sha if new else None
        if old_sha != new_sha:
            line = (
                b"index "
                + (old_sha[:_ABBREV] if old_sha else zero)
                + b".."
                + (new_sha[:_ABBREV] if new_sha else zero)
            )
            if old is not None and new is not None and old.mode == new.mode:
                line += b" %06o" % new.mode
            out.append(line)
        header = b"\n".join(out) + b"\n"
        if old_sha == new_sha:
            return header
        a_data = self._blob_data(old.sha) if old else b""
        b_data = self._blob_data(new.sha) if new else b""
        a_label = _quote(b"a/", a_path) if old else b"/dev/null"
        b_label = _quote(b"b/", b_path) if new else b"/dev/null"
        if b"\0" in a_data[:_BINARY_PROBE] or b"\0" in b_data[:_BINARY_PROBE]:
            return header + b"Binary files " + a_label + b" and " + b_label + b" differ\n"
        hunks = list(_hunks(a_data, b_data))
        if not hunks:
            return header
        a_tab = b"\t" if old and b" " in a_path else b""
        b_tab = b"\t" if new and b" " in b_path else b""
        return (
            header
            + b"--- " + a_label + a_tab + b"\n"
            + b"+++ " + b_label + b_tab + b"\n"
            + b"".join(hunks)
        )

    def _similarity(self, old: _Entry, new: _Entry) -> int:
        if old.sha == new.sha:
            return 100
        a, b = self._store[old.sha], self._store[new.sha]
        if _similarity_score is not None:
            return int(_similarity_score(a, b))
        ratio = difflib.SequenceMatcher(None, a.as_raw_string(), b.as_raw_string())
        return int(ratio.quick_ratio() * 100)  # pragma: no cover

    # ----------------------------------------------------------- tree access

    def _lookup(self, rev: str, path: str) -> tuple[int, bytes] | None:
        """(mode, sha) of the entry at `path` in `rev`'s tree; None if absent."""
        comps = _user_path(path, self.path)
        mode, sha = stat.S_IFDIR, self._tree_id(rev)
        for comp in comps:
            if not stat.S_ISDIR(mode):
                return None
            tree = self._store[sha]
            if not isinstance(tree, Tree) or comp not in tree:
                return None
            mode, sha = tree[comp]
        return mode, sha

    def _walk(
        self, tree_sha: bytes, prefix: bytes, rev: str
    ) -> Iterator[tuple[bytes, int, bytes]]:
        """Every non-tree entry below a tree as (path, mode, sha); gitlinks skipped."""
        stack = [(tree_sha, prefix)]
        while stack:
            sha, base = stack.pop()
            tree = self._store[sha]
            if not isinstance(tree, Tree):
                raise RepoError(
                    f"commit {rev!r} in {self.path} is damaged: {sha.decode()} "
                    "is not a tree (check it with `git fsck`)"
                )
            for name, mode, child in tree.iteritems():
                path = base + b"/" + name if base else name
                self._check_name(name, path, rev)
                if stat.S_ISDIR(mode):
                    stack.append((child, path))
                elif _is_gitlink(mode):
                    continue
                else:
                    yield path, mode, child

    def _selected(
        self, rev: str, paths: Sequence[str]
    ) -> dict[bytes, tuple[int, bytes]]:
        """The non-tree entries of `rev` equal to or under any of `paths`."""
        root = self._tree_id(rev)
        if isinstance(paths, str | bytes):
            paths = [paths]  # type: ignore[list-item]
        picked: dict[bytes, tuple[int, bytes]] = {}
        roots = [b"/".join(_user_path(p, self.path)) for p in paths] or [b""]
        for prefix in roots:
            if prefix:
                found = self._lookup(rev, os.fsdecode(prefix))
                if found is None:
                    continue
                mode, sha = found
                if not stat.S_ISDIR(mode):
                    if not _is_gitlink(mode):
                        picked[prefix] = (mode, sha)
                    continue
            else:
                sha = root
            for path, mode, child in self._walk(sha, prefix, rev):
                picked[path] = (mode, child)
        return picked

    def list_files(self, sha: str, paths: Sequence[str] = ()) -> list[str]:
        """Every file (blob or symlink) path at `sha`, optionally only those
        equal to or under one of `paths`; sorted.  Submodules are skipped."""
        return [_decode(p) for p in sorted(self._selected(sha, paths))]

    def file_ids(self, sha: str) -> dict[str, str]:
        """Every file path at `sha` with its blob id: one tree walk, so a
        caller can compare two commits' files without reading them."""
        return {_decode(p): obj.decode("ascii") for p, (_, obj) in self._selected(sha, ()).items()}

    def read_blob(self, blob_id: str) -> bytes:
        """A blob's content by id, as listed by `file_ids`."""
        return self._blob_data(blob_id.encode("ascii"))

    def read(self, sha: str, path: str) -> bytes | None:
        """The content of the file at `path` in `sha`; None when absent.

        A symlink reads as its target; a folder or a submodule reads as None.
        """
        found = self._lookup(sha, path)
        if found is None:
            return None
        mode, obj_sha = found
        if stat.S_ISDIR(mode) or _is_gitlink(mode):
            return None
        return self._blob_data(obj_sha)

    def tree_sha(self, sha: str, path: str = "") -> str | None:
        """The object id of the tree or blob at `path` in `sha` ("" = root)."""
        found = self._lookup(sha, path)
        return None if found is None else found[1].decode("ascii")

    def export(self, sha: str, dest: Path, paths: Sequence[str] = ()) -> None:
        """Write the files of `sha` (or only those under `paths`) into `dest`.

        Regular files get mode 0755 or 0644 after their exec bit, symlinks
        are made as symlinks, submodules are skipped.  A tree entry that
        could land outside `dest` (a "..", "/" or ".git" name) is refused
        before anything is written, and nothing is written through a symlink.
        """
        plan = self._selected(sha, paths)  # validates every name first
        dest = Path(dest)
        try:
            dest.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RepoError(f"cannot create {dest}: {_one_line(exc)}") from None
        if not dest.is_dir():
            raise RepoError(f"cannot export into {dest}: it is not a folder")
        root = os.fsencode(dest)
        made: set[bytes] = set()
        for path in sorted(plan):
            mode, obj_sha = plan[path]
            data = self._blob_data(obj_sha)
            parts = path.split(b"/")
            where = root
            for part in parts[:-1]:
                where = os.path.join(where, part)
                if where not in made:
                    _ensure_dir(where, dest)
                    made.add(where)
            target = os.path.join(where, parts[-1])
            _clear_for_file(target, dest)
            try:
                if stat.S_ISLNK(mode):
                    os.symlink(data, target)
                else:
                    _write_file(target, data, 0o755 if mode & 0o111 else 0o644)
            except (OSError, ValueError) as exc:
                raise RepoError(
                    f"cannot write {os.fsdecode(target)}: {_one_line(exc)}"
                ) from None

    # -------------------------------------------------------------- branches

    def branches(self, pattern: str = "*") -> dict[str, str]:
        """Local branch name -> sha, for the names matching the fnmatch `pattern`."""
        refs = self._repo.refs.as_dict(b"refs/heads/")
        out: dict[str, str] = {}
        for name, sha in sorted(refs.items()):
            text = os.fsdecode(bytes(name))
            if fnmatch.fnmatchcase(text, pattern):
                out[text] = bytes(sha).decode("ascii")
        return out

    def nearest_tag(self, sha: str, limit: int = 5000) -> str | None:
        """The tag on `sha` or its closest ancestor (breadth first, at most
        `limit` commits): what a version-from-git build would call it."""
        tagged: dict[str, str] = {}
        for name in sorted(self._repo.refs.as_dict(b"refs/tags/")):
            try:
                tagged.setdefault(self.resolve(f"refs/tags/{os.fsdecode(bytes(name))}"), os.fsdecode(bytes(name)))
            except RepoError:
                continue  # a tag on a tree or blob names no version
        queue, seen = [sha], {sha}
        while queue and len(seen) <= limit:
            current = queue.pop(0)
            if current in tagged:
                return tagged[current]
            for parent in self._commit_obj(current).parents:
                text = bytes(parent).decode("ascii")
                if text not in seen:
                    seen.add(text)
                    queue.append(text)
        return None

    # --------------------------------------------------------------- helpers

    def _blob_data(self, sha: bytes) -> bytes:
        obj = self._store[sha]
        if not isinstance(obj, Blob):
            raise RepoError(
                f"object {sha.decode('ascii')} in {self.path} is a "
                f"{obj.type_name.decode('ascii')}, not a file (check it with "
                "`git fsck`)"
            )
        return obj.as_raw_string()

    def _check_tree_path(self, path: bytes, rev: str) -> None:
        for comp in path.split(b"/"):
            self._check_name(comp, path, rev)

    def _check_name(self, name: bytes, path: bytes, rev: str) -> None:
        if not _safe_name(name):
            raise RepoError(
                f"refusing commit {rev!r} in {self.path}: its tree holds the "
                f"unsafe path {os.fsdecode(path)!r} (an entry named '..', '.git' "
                "or with a '/', which git refuses to check out)"
            )


# ------------------------------------------------------------------- helpers


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())


def _missing(exc: KeyError) -> str:
    """The object id a KeyError from dulwich names, as text."""
    key = exc.args[0] if exc.args else ""
    if isinstance(key, bytes):
        return key.decode("ascii", "replace")
    return str(key)


def _enclosing_repo(where: Path) -> Path | None:
    for parent in where.parents:
        if (parent / ".git").exists():
            return parent
    return None


def _ref_candidates(name: str) -> list[bytes]:
    """git's rev-parse order: NAME, refs/NAME, tags, heads, remotes, remote HEAD.

    A bare top-level name is only tried when it looks like HEAD, ORIG_HEAD...
    and every other candidate must be a well-formed ref name, so a hostile
    name ("../config") never becomes a path under .git.
    """
    raw = os.fsencode(name)
    top = [raw] if _TOP_LEVEL_REF.match(name) else []
    full = [raw] if raw.startswith(b"refs/") and check_ref_format(raw) else []
    rest = [
        c
        for c in (
            b"refs/" + raw,
            b"refs/tags/" + raw,
            b"refs/heads/" + raw,
            b"refs/remotes/" + raw,
            b"refs/remotes/" + raw + b"/HEAD",
        )
        if check_ref_format(c)
    ]
    return list(dict.fromkeys(top + full + rest))


def _is_full_sha(text: str, hexlen: int) -> bool:
    return len(text) == hexlen and bool(_HEX.match(text))


def _is_gitlink(mode: int) -> bool:
    return stat.S_IFMT(mode) == _S_IFGITLINK


def _entry(e: object) -> _Entry | None:
    if e is None:
        return None
    path, mode, sha = e.path, e.mode, e.sha  # type: ignore[attr-defined]
    if path is None or mode is None or sha is None or _is_gitlink(mode):
        return None
    return _Entry(bytes(path), int(mode), bytes(sha))


def _change_order(change: _Change) -> tuple[bytes, int]:
    kind, old, new = change
    entry = new or old
    assert entry is not None
    # a type change (file <-> symlink) is a delete and an add of one path:
    # the delete first, as git prints it.
    return entry.path, 0 if kind == "delete" else 1


def _decode(path: bytes) -> str:
    return os.fsdecode(path)


def _safe_name(name: bytes) -> bool:
    return (
        name not in (b"", b".", b"..")
        and b"/" not in name
        and b"\0" not in name
        and name.lower() != b".git"
    )


def _user_path(path: str, repo: Path) -> list[bytes]:
    """Split a caller's repository-relative path; refuse ones that could escape."""
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if text.startswith("/") or text.startswith("\\") or re.match(r"[A-Za-z]:", text):
        raise RepoError(
            f"path {text!r} is absolute: give it relative to the top of {repo}"
        )
    comps = [c for c in text.split("/") if c not in ("", ".")]
    for comp in comps:
        if comp == ".." or comp.lower() == ".git" or "\0" in comp:
            raise RepoError(
                f"refusing path {text!r}: it must stay inside {repo} and not "
                "name '..' or '.git'"
            )
    return [os.fsencode(c) for c in comps]


def _ensure_dir(where: bytes, dest: Path) -> None:
    try:
        st = os.lstat(where)
    except FileNotFoundError:
        try:
            os.mkdir(where, 0o755)
        except OSError as exc:
            raise RepoError(
                f"cannot create {os.fsdecode(where)}: {_one_line(exc)}"
            ) from None
        st = os.lstat(where)
    if not stat.S_ISDIR(st.st_mode):  # a symlink (or a file) in the way
        raise RepoError(
            f"cannot export into {dest}: {os.fsdecode(where)} exists and is not "
            "a folder (export into an empty folder)"
        )


def _clear_for_file(target: bytes, dest: Path) -> None:
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        raise RepoError(
            f"cannot export into {dest}: {os.fsdecode(target)} is a folder "
            "(export into an empty folder)"
        )
    os.unlink(target)


def _write_file(target: bytes, data: bytes, mode: int) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_BINARY", 0)
    fd = os.open(target, flags, mode)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


_QUOTE_MAP = {
    0x07: b"\\a",
    0x08: b"\\b",
    0x09: b"\\t",
    0x0A: b"\\n",
    0x0B: b"\\v",
    0x0C: b"\\f",
    0x0D: b"\\r",
    0x22: b'\\"',
    0x5C: b"\\\\",
}


def _quote(prefix: bytes, path: bytes) -> bytes:
    """git's quoting of a path in diff headers (core.quotePath=true)."""
    if not any(b < 0x20 or b in (0x22, 0x5C) or b >= 0x7F for b in path):
        return prefix + path
    out = bytearray(b'"' + prefix)
    for b in path:
        if b in _QUOTE_MAP:
            out += _QUOTE_MAP[b]
        elif b < 0x20 or b >= 0x7F:
            out += b"\\%03o" % b
        else:
            out.append(b)
    out += b'"'
    return bytes(out)


def _lines(data: bytes) -> list[bytes]:
    """Split on "\\n" only (as git does), keeping the line ends."""
    if not data:
        return []
    lines = data.split(b"\n")
    out = [line + b"\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def _range(start: int, stop: int) -> bytes:
    length = stop - start
    if length == 1:
        return b"%d" % (start + 1)
    if length == 0:
        return b"%d,0" % start
    return b"%d,%d" % (start + 1, length)


def _funcname(lines: list[bytes], before: int) -> bytes:
    """git's default hunk-header context: the nearest line above the hunk
    that starts with a letter, '_' or '$' (first 80 bytes, right-stripped)."""
    for k in range(before - 1, -1, -1):
        line = lines[k]
        if line[:1].isalpha() or line[:1] in (b"_", b"$"):
            return line[:80].rstrip()
    return b""


def _emit(sign: bytes, line: bytes) -> bytes:
    if line.endswith(b"\n"):
        return sign + line
    return sign + line + b"\n\\ No newline at end of file\n"


def _hunks(a_data: bytes, b_data: bytes) -> Iterator[bytes]:
    a, b = _lines(a_data), _lines(b_data)
    autojunk = len(a) + len(b) > _DIFF_LIMIT_LINES
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=autojunk)
    for group in matcher.get_grouped_opcodes(_CONTEXT):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        head = b"@@ -" + _range(i1, i2) + b" +" + _range(j1, j2) + b" @@"
        func = _funcname(a, i1)
        parts = [head + (b" " + func if func else b"") + b"\n"]
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                parts.extend(_emit(b" ", line) for line in a[x1:x2])
                continue
            parts.extend(_emit(b"-", line) for line in a[x1:x2])
            parts.extend(_emit(b"+", line) for line in b[y1:y2])
        yield b"".join(parts)
