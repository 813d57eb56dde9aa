"""The digest state: the names of exactly what a verdict judged."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class RuleDigest:
    """One sealing rule at base and at head.

    `changed` lists what the rule counts as a change (files and
    `FILE#SECTION` entries); `added` the new files an `allow_new` rule
    permits, shown but never a change. Under `allow_new` the head digest
    covers only the files base had, so equal digests mean intact.
    """

    name: str
    on_change: str
    allow_new: bool
    base: str
    head: str
    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()

    @property
    def intact(self) -> bool:
        return not self.changed

    @property
    def violated(self) -> bool:
        """A change the rule's policy fails outright."""
        return self.on_change == "fail" and bool(self.changed)

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "on_change": self.on_change,
            "allow_new": self.allow_new,
            "base": self.base,
            "head": self.head,
            "intact": self.intact,
            "changed": list(self.changed),
            "added": list(self.added),
        }


@dataclass(frozen=True)
class Digests:
    """`sealed_*` name what old_tests restores (the files of every rule
    that is not `allow`); `rules` each rule on its own, sections included;
    `random_seed` lets a person replay the shuffled run's order."""

    base: str
    head: str
    sealed_base: str = ""
    sealed_head: str = ""
    sealed_changed: tuple[str, ...] = ()
    manifest: str = ""
    manifest_files: tuple[str, ...] = ()
    judge_changed: tuple[str, ...] = ()
    rules: tuple[RuleDigest, ...] = ()
    random_seed: int | None = None  # the random-order run's seed (random_order = true)
    hidden: str = ""  # sha256 of the hidden tests that judged (hidden configured)
    hidden_files: int = 0  # how many files: a count, never their names
    test_network: bool = False  # base's config gave the test runs the network
    layer: str = ""  # the dependency layer's key (the resolved set's), when one was used
    layer_state: str = ""  # "hit", "miss" (built by this run) or "rebuilt" (a tampered one replaced)

    @property
    def sealed_intact(self) -> bool:
        return not self.sealed_changed

    def with_layer(self, key: str, state: str) -> Digests:
        return replace(self, layer=key, layer_state=state)

    @property
    def cache_words(self) -> str:
        """The install cache, as the manifest line says it: `cache hit` or
        `cache miss (building)`; '' when no layer was used."""
        if not self.layer:
            return ""
        if self.layer_state == "hit":
            return f"cache hit (layer {self.layer[:12]})"
        why = "building: the kept one no longer matched its manifest" if self.layer_state == "rebuilt" else "building"
        return f"cache miss ({why}; layer {self.layer[:12]})"

    def forbidden(self) -> list[str]:
        """Changes that an `on_change = "fail"` rule forbids, each named with its rule."""
        return [f"{path} (rule {rule.name!r})" for rule in self.rules if rule.violated for path in rule.changed]

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
            "manifest": {
                "digest": self.manifest,
                "files": list(self.manifest_files),
                **({"layer": self.layer, "cache": self.layer_state} if self.layer else {}),
            },
            "judge_changed": list(self.judge_changed),
            "rules": [rule.to_json() for rule in self.rules],
            # present only when configured, so a plain run's record reads as before
            **({"random_seed": self.random_seed} if self.random_seed is not None else {}),
            **({"hidden": {"digest": self.hidden, "files": self.hidden_files}} if self.hidden else {}),
            **({"test_network": True} if self.test_network else {}),
        }
