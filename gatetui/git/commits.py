"""Commits by name: resolving refs, merge bases, branches, the nearest tag."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass

from dulwich.graph import find_merge_base
from dulwich.objects import Commit as _DCommit
from dulwich.objects import ObjectID
from dulwich.refs import Ref

from gatetui.git.errors import RepoError, missing
from gatetui.git.handle import RepoHandle
from gatetui.git.refs import ABBREV, is_full_sha, resolve_name, split_ref, suffix_steps


@dataclass(frozen=True)
class Commit:
    """The few facts about a commit that gatetui shows."""

    sha: str
    short: str
    summary: str  # first line of the message
    author: str  # "Name <email>", as recorded
    time: int  # commit time, seconds since the epoch


class CommitReading(RepoHandle):
    """What a repository says about its commits and refs."""

    def resolve(self, ref: str) -> str:
        """The full hex sha of the commit `ref` names.

        Accepts a full or short (>= 4 hex digits) sha, a branch ("main",
        "agent/fix", "refs/heads/x"), a tag (annotated tags are peeled), a
        remote-tracking ref ("origin/main", "refs/remotes/origin/main"),
        "HEAD", and git's `~N`, `^N` and `^{commit}` suffixes ("HEAD~2",
        "main^2").
        """
        name, suffix = split_ref(ref, self.path)
        sha = resolve_name(self._repo, name, ref, self.path)
        for op, n in suffix_steps(suffix, ref, self.path):
            if op == "~":
                for _ in range(n):
                    sha = self._parent(sha, 1, ref)
            elif op == "^" and n:
                sha = self._parent(sha, n, ref)
        return sha

    def _parent(self, sha: str, n: int, ref: str) -> str:
        parents = self._commit_obj(sha).parents
        if len(parents) < n:
            raise RepoError(
                f"unknown ref {ref!r} in {self.path}: commit {sha[:ABBREV]} has {len(parents)} parent(s), not {n}"
            )
        return parents[n - 1].decode("ascii")

    # --------------------------------------------------------------- commits

    def _commit_obj(self, rev: str) -> _DCommit:
        if is_full_sha(rev, self._hexlen):  # the fast path: a commit's sha
            try:
                obj = self._store[ObjectID(rev.lower().encode("ascii"))]
            except KeyError:
                obj = None
            if isinstance(obj, _DCommit):
                return obj
        obj = self._store[ObjectID(self.resolve(rev).encode("ascii"))]
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
            short=hexsha[:ABBREV],
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
                f"object {missing(exc)} is missing (the repository may be "
                "shallow; run `git fetch --unshallow`)"
            ) from None
        return bases[0].decode("ascii") if bases else None

    # ----------------------------------------------------------------- diffs

    def branches(self, pattern: str = "*") -> dict[str, str]:
        """Local branch name -> sha, for the names matching the fnmatch `pattern`."""
        refs = self._repo.refs.as_dict(Ref(b"refs/heads/"))
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
        for name in sorted(self._repo.refs.as_dict(Ref(b"refs/tags/"))):
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
