"""The files of one commit, read lazily and cached.

Configuration, profiles and sealing rules are all read from a commit (base,
never the work tree), and tests build them from plain dicts: this view is the
one thing they need from a repository.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gatetui.git.repo import GitRepo


class Snapshot:
    def __init__(
        self, sha: str, paths: Iterable[str], read: Callable[[str], bytes | None], ids: Mapping[str, str] | None = None
    ):
        self.sha = sha
        self._ids = ids
        self.paths: tuple[str, ...] = tuple(sorted(paths))
        self._path_set = frozenset(self.paths)
        self._read = read
        self._cache: dict[str, bytes | None] = {}

    @classmethod
    def of_commit(cls, repo: GitRepo, sha: str) -> Snapshot:
        ids = repo.file_ids(sha)
        return cls(sha, ids, lambda path: repo.read_blob(ids[path]), ids)

    @classmethod
    def of_files(cls, files: Mapping[str, bytes | str], sha: str = "0" * 40) -> Snapshot:
        data = {p: v.encode() if isinstance(v, str) else v for p, v in files.items()}
        return cls(sha, data, data.get)

    def __contains__(self, path: object) -> bool:
        return path in self._path_set

    def read(self, path: str) -> bytes | None:
        if path not in self._path_set:
            return None
        if path not in self._cache:
            self._cache[path] = self._read(path)
        return self._cache[path]

    def ident(self, path: str) -> str:
        """A name for the file's content: its blob id when the commit gave
        one (no read needed), else a hash of the bytes."""
        if self._ids is not None and path in self._ids:
            return self._ids[path]
        return hashlib.sha256(self.read(path) or b"").hexdigest()

    def text(self, path: str) -> str | None:
        data = self.read(path)
        return None if data is None else data.decode("utf-8", errors="replace")

    def under(self, folder: str) -> list[str]:
        prefix = folder.rstrip("/") + "/"
        return [p for p in self.paths if p.startswith(prefix)]

    def has_dir(self, folder: str) -> bool:
        prefix = folder.rstrip("/") + "/"
        return any(p.startswith(prefix) for p in self.paths)
