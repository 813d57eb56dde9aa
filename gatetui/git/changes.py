"""One changed file between base and head.

Shared by `repo.py` (which computes the changes with dulwich) and the pure
diff scanner (which reads them), so that neither depends on the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ChangeKind = Literal["add", "delete", "modify", "rename"]


@dataclass(frozen=True)
class FileChange:
    """A file as it was at base and as it is at head.

    `old_*` is None for an added file, `new_*` is None for a deleted one; a
    rename carries both paths (and both contents, which may differ).
    """

    kind: ChangeKind
    old_path: str | None
    new_path: str | None
    old_data: bytes | None
    new_data: bytes | None

    @property
    def path(self) -> str:
        """The path a person would name this change by: head's, else base's."""
        return self.new_path or self.old_path or ""
