"""Opening a repository read-only, and letting it go: the part of GitRepo
that owns dulwich's `Repo` (and its open pack files)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from types import TracebackType
from typing import Self

from dulwich.errors import NotGitRepository
from dulwich.repo import Repo

from gatetui.git.errors import RepoError, one_line


class RepoHandle:
    """A dulwich repository opened read-only; `open` finds and checks it."""

    def __init__(self, repo: Repo, path: Path) -> None:
        self._repo = repo
        self._store = repo.object_store
        self.path = path
        self._hexlen = repo.object_format.hex_length

    # ------------------------------------------------------------------ open

    @classmethod
    def open(cls, path: str | Path) -> Self:
        """Open the repository whose top-level folder (or bare folder) is `path`."""
        given = Path(path).expanduser()
        if not given.exists():
            raise RepoError(f"no such folder: {given} (pass the repository's top-level folder)")
        if not given.is_dir():
            raise RepoError(f"not a folder: {given} (pass the repository's top-level folder)")
        where = given.resolve()
        try:
            repo = Repo(str(where))
        except NotGitRepository:
            top = _enclosing_repo(where)
            if top is not None:
                raise RepoError(
                    f"{where} is inside the git repository at {top}: pass the top-level folder {top}"
                ) from None
            raise RepoError(
                f"not a git repository: {where} (run `git init` or pass the repository's top-level folder)"
            ) from None
        except Exception as exc:  # noqa: BLE001 - unsupported format, unreadable config, ...
            raise RepoError(
                f"cannot read the git repository at {where}: {one_line(exc)} (check it with `git status`)"
            ) from None
        return cls(repo, Path(repo.path).resolve())

    def close(self) -> None:
        """Release the pack files dulwich keeps open."""
        self._repo.close()

    def __del__(self) -> None:
        # A forgotten close() must not leak open packs (dulwich would warn).
        repo = getattr(self, "_repo", None)
        if repo is not None:
            with contextlib.suppress(Exception):  # pragma: no cover - interpreter shutdown
                repo.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"GitRepo({str(self.path)!r})"


def _enclosing_repo(where: Path) -> Path | None:
    for parent in where.parents:
        if (parent / ".git").exists():
            return parent
    return None
