"""The files of one commit, read lazily and cached.

Configuration, profiles and sealing rules are all read from a commit (base,
never the work tree), and tests build them from plain dicts: this view is the
one thing they need from a repository.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gatetui.repo import GitRepo


class Snapshot:
    def __init__(self, sha: str, paths: Iterable[str], read: Callable[[str], bytes | None]):
        self.sha = sha
        self.paths: tuple[str, ...] = tuple(sorted(paths))
        self._path_set = frozenset(self.paths)
        self._read = read
        self._cache: dict[str, bytes | None] = {}

    @classmethod
    def of_commit(cls, repo: GitRepo, sha: str) -> Snapshot:
        return cls(sha, repo.list_files(sha), lambda path: repo.read(sha, path))

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

    def text(self, path: str) -> str | None:
        data = self.read(path)
        return None if data is None else data.decode("utf-8", errors="replace")

    def under(self, folder: str) -> list[str]:
        prefix = folder.rstrip("/") + "/"
        return [p for p in self.paths if p.startswith(prefix)]

    def has_dir(self, folder: str) -> bool:
        prefix = folder.rstrip("/") + "/"
        return any(p.startswith(prefix) for p in self.paths)
