"""The pinned third-party set from a dependency layer, not installed per gate.

After head's project and the tree's own are installed and the rest is
resolved, the resolved set names a layer (the stack's key: every pinned
name, version and file hash, the interpreter and the platform). The
backend's store has it (verified against its manifest at this use), or it
is built now, once however many gates ask, in a workspace that holds
nothing of head's: the stack's build commands there, then the store makes
it the supervisor's, read-only, checks it against its RECORDs and writes
its manifest. The gate's workspace is then shown the layer read-only, and
the stack's link (run after every step of head's code) puts it under the
gate's own environment; head's project stays in that environment, on top.
Nothing that runs head's code can write a layer: a head that names another
dependency resolves to another key, never to a changed layer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from gatetui.backends.base import LayerStore, Workspace
from gatetui.gate.install import Failed, Run
from gatetui.stacks.base import Dependencies, LayerRecipe, Resolved


@dataclass(frozen=True)
class LayerUse:
    key: str
    state: str  # "hit", "miss" (built by this gate), "rebuilt" (a tampered one thrown away)
    shown: str  # where the workspace's commands see it


@dataclass
class LayerSteps:
    """One gate run's use of the store: what each workspace was shown
    (by its path: copies share it), the notes, the layers held."""

    store: LayerStore
    run: Run
    notes: list[str] = field(default_factory=list)
    used: dict[str, LayerUse] = field(default_factory=dict)  # workspace path -> its layer
    releases: list[Callable[[], None]] = field(default_factory=list)

    async def install(self, workspace: Workspace, deps: Dependencies, recipe: LayerRecipe, resolved: Resolved,
                      env: dict[str, str]) -> LayerUse | Failed:
        key = recipe.key(resolved, await self.store.interpreter(recipe.interpreter))
        for _ in range(2):  # a prune between the claim and the hold took it: once more
            got = await self._get(key, deps, recipe, resolved, env)
            if isinstance(got, Failed):
                return got
            path, state = got
            release = await self.store.hold(key)
            if path.is_dir():
                break
            release()
        else:
            return Failed("dependency layer", None, "the dependency layer was removed as it was built, twice")
        self.releases.append(release)
        shown = await workspace.show_layer(path)
        link = {k: v.replace("{layer}", shown) for k, v in recipe.link.env.items()}
        result = await self.run(workspace, recipe.link.command, link, False)
        if not result.ok:
            return Failed("link the dependency layer", result)
        use = self.used[workspace.path] = LayerUse(key, state, shown)
        return use

    async def _get(self, key: str, deps: Dependencies, recipe: LayerRecipe, resolved: Resolved,
                   env: dict[str, str]) -> tuple[Path, str] | Failed:
        """The layer's folder, found (`hit`) or built under the key's lock."""
        failed: list[Failed] = []
        async with self.store.claim(key):
            found = await self.store.find(key)
            if found.note:
                self.notes.append(found.note)
            if found.path is not None:
                return found.path, "hit"
            built = await self.store.build(key, recipe.folder, self._maker(deps, recipe, resolved, env, failed),
                                           recipe.verify, {"holds": _holds(resolved)},
                                           recipe.cache.folder if recipe.cache is not None else "")
        if not isinstance(built, list):
            return built, "rebuilt" if found.note else "miss"
        if failed:
            return failed[0]
        return Failed("dependency layer", None, f"the dependency layer built from the index failed its check: "
                                                f"{'; '.join(built[:3])}")

    def _maker(self, deps: Dependencies, recipe: LayerRecipe, resolved: Resolved, env: dict[str, str],
               failed: list[Failed]) -> Callable[[Workspace], Awaitable[bool]]:
        async def make(workspace: Workspace) -> bool:
            *first, last = recipe.build
            for step in (*first, deps.pinned_command(last, resolved)):
                result = await self.run(workspace, step.replace("{layer}", recipe.folder), env, True)
                if not result.ok:
                    failed.append(Failed(last if step not in first else step, result))
                    return False
            if recipe.cache is not None:  # no network: it only reads what the build installed
                script = recipe.cache.script
                result = await self.run(workspace, script.command, {**env, **script.env}, False)
                if not result.ok:
                    failed.append(Failed(script.command, result))
                    return False
            return True
        return make

    def shown_to(self, workspace: Workspace) -> str:
        use = self.used.get(workspace.path)
        return use.shown if use is not None else ""

    def release(self) -> None:
        """Let every layer this run held go (the run is over)."""
        while self.releases:
            self.releases.pop()()


def _holds(resolved: Resolved) -> list[str]:
    """What a layer holds, for `gatetui cache ls`: name==version of each."""
    return sorted(line.split(" ", 1)[0] for line in resolved.pinned)
