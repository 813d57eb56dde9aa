"""The digest state: the names of exactly what a verdict judged."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Digests:
    base: str
    head: str
    sealed_base: str = ""
    sealed_head: str = ""
    sealed_changed: tuple[str, ...] = ()
    manifest: str = ""
    manifest_files: tuple[str, ...] = ()
    judge_changed: tuple[str, ...] = ()

    @property
    def sealed_intact(self) -> bool:
        return not self.sealed_changed

    def to_json(self) -> dict[str, object]:
        return {
            "base": self.base,
            "head": self.head,
            "sealed": {
                "base": self.sealed_base,
                "head": self.sealed_head,
                "intact": self.sealed_intact,
                "changed": list(self.sealed_changed),
            },
            "manifest": {"digest": self.manifest, "files": list(self.manifest_files)},
            "judge_changed": list(self.judge_changed),
        }
