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

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gatetui.backends.base import BuiltLayer, LayerBuild, LayerStore, LayerUnavailable, Workspace
from gatetui.gate.cost import Usage, used_by
from gatetui.gate.install.steps import Failed, Run, telling_line
from gatetui.stacks.base import Dependencies, LayerRecipe, LockLayer, Resolved

Held = tuple[Path, str, Usage]  # a layer found or built and held: its folder, its state, what building it used
Built = tuple[str, Held] | Failed | LayerUnavailable  # what layer_for gave (its key and Held), or raised


@dataclass(frozen=True)
class LayerUse:
    key: str
    state: str  # "hit", "miss" (built by this gate), "rebuilt" (a tampered one thrown away)
    shown: str  # where the workspace's commands see it
    saved: Usage = Usage()  # a hit: what building the layer used, not spent by this gate


@dataclass
class LayerSteps:
    """One gate run's use of the store: what each workspace was shown
    (by its path: copies share it), the notes, the layers held."""

    store: LayerStore
    run: Run
    save: Callable[[Usage], None] = lambda usage: None  # told what each layer found spared
    notes: list[str] = field(default_factory=list)
    used: dict[str, LayerUse] = field(default_factory=dict)  # workspace path -> its layer
    releases: list[Callable[[], None]] = field(default_factory=list)

    async def install(
        self,
        workspace: Workspace,
        deps: Dependencies,
        recipe: LayerRecipe,
        resolved: Resolved,
        env: dict[str, str],
        built: Built | None = None,
    ) -> LayerUse | Failed | None:
        """The pinned set from its layer, linked under the workspace's
        environment; None: the backend could not keep or show one just now
        (the notes say why), and the caller installs the set itself.
        `built`: what layer_for gave for this set already (early_layer.py)."""
        try:
            got = built if built is not None else await self.layer_for(workspace, deps, recipe, resolved, env)
            if isinstance(got, LayerUnavailable):
                raise got
            if isinstance(got, Failed):
                return got
            use = await self._show(workspace, *got)
        except LayerUnavailable as err:
            self.notes.append(f"no dependency layer: {err}; the pinned set was installed in the gate's own environment")
            return None
        link = {k: v.replace("{layer}", use.shown) for k, v in recipe.link.env.items()}
        result = await self.run(workspace, recipe.link.command, link, False)
        return Failed("link the dependency layer", result) if not result.ok else use

    async def layer_for(
        self, workspace: Workspace, deps: Dependencies, recipe: LayerRecipe, resolved: Resolved, env: dict[str, str]
    ) -> tuple[str, Held] | Failed:
        """The set's layer found, or built where nothing of head's runs, and
        held for this run: its key and where it is (LayerUnavailable: the
        backend cannot keep one just now)."""
        key = recipe.key(resolved, await self.store.interpreter(recipe.interpreter, workspace))
        *first, last = recipe.build
        # (command, its environment, network, how a failure names it)
        steps = [(step.replace("{layer}", recipe.folder), env, True, step) for step in first]
        steps.append((deps.pinned_command(last, resolved).replace("{layer}", recipe.folder), env, True, last))
        cache = recipe.cache if self.store.keeps_cache else None
        if cache is not None:  # no network: it only reads what the build installed
            script = cache.script
            steps.append((script.command, {**env, **script.env}, False, script.command))
        failed: list[Failed] = []
        about: dict[str, object] = {"holds": holds(resolved)}  # the maker adds what the build used
        got = await self.held(
            key,
            lambda: self.store.build(
                LayerBuild(
                    key,
                    recipe.folder,
                    maker(self.run, steps, failed, about),
                    recipe.verify,
                    about,
                    cache=cache.folder if cache is not None else "",
                ),
                workspace,
            ),
            failed,
        )
        return got if isinstance(got, Failed) else (key, got)

    async def prepare(self, workspace: Workspace, recipe: LayerRecipe) -> None:
        """Ask for what the key names besides the set now, while the
        workspace has run nothing of head's: a backend may ask there rather
        than start a machine of its own for it (Runtime)."""
        await self.store.interpreter(recipe.interpreter, workspace)

    async def locked(
        self, workspace: Workspace, recipe: LockLayer, files: Mapping[str, bytes], env: dict[str, str]
    ) -> dict[str, str] | None:
        """What a lock file pins, from its layer: the variables that show it
        to the install and the runs; None when the lock names nothing to
        layer or the layer could not be built or shown (the gate then
        fetches for itself, and the notes say why)."""
        if recipe.key(files, "") is None:  # nothing to layer, whatever the toolchain
            return None
        named = ", ".join(name for name in recipe.files if name in files)
        if recipe.at and not workspace.shows_in_tree:  # said before a machine is asked for its toolchain
            self.notes.append(
                f"no dependency layer for {named}: this backend cannot show "
                f"it at {recipe.at} in the tree; the install fetched for itself"
            )
            return None
        key = recipe.key(files, await self.store.interpreter(recipe.toolchain, workspace))
        if key is None:
            return None
        steps = [(step.replace("{layer}", recipe.folder), env, True, step) for step in recipe.build]
        failed: list[Failed] = []
        about: dict[str, object] = {"holds": sorted(files)}
        try:
            got = await self.held(
                key,
                lambda: self.store.build(
                    LayerBuild(key, recipe.folder, maker(self.run, steps, failed, about), about=about, files=files),
                    workspace,
                ),
                failed,
            )
        except LayerUnavailable as err:
            got = Failed("dependency layer", None, str(err))
        if isinstance(got, Failed):
            self.notes.append(f"no dependency layer for {named}: {why(got)}; the install fetched for itself")
            return None
        try:
            use = await self._show(workspace, key, got, recipe.at)
        except LayerUnavailable as err:
            self.notes.append(f"no dependency layer for {named}: {err}; the install fetched for itself")
            return None
        return {k: v.replace("{layer}", use.shown) for k, v in recipe.env.items()}

    async def held(self, key: str, build: Callable[[], Awaitable[BuiltLayer]], failed: list[Failed]) -> Held | Failed:
        """The layer found or built, and held for this run."""
        for _ in range(2):  # a prune between the claim and the hold took it: once more
            got = await self._get(key, build, failed)
            if isinstance(got, Failed):
                return got
            path, state, saved = got
            release = await self.store.hold(key, path)
            if release is not None:
                self.releases.append(release)
                return path, state, saved
        return Failed("dependency layer", None, "the dependency layer was removed as it was built, twice")

    async def _show(self, workspace: Workspace, key: str, got: Held, at: str = "") -> LayerUse:
        path, state, saved = got
        use = self.used[workspace.path] = LayerUse(key, state, await workspace.show_layer(path, at), saved)
        if state == "hit":
            self.save(saved)
        return use

    async def _get(
        self, key: str, build: Callable[[], Awaitable[BuiltLayer]], failed: list[Failed]
    ) -> tuple[Path, str, Usage] | Failed:
        """The layer's folder, found (`hit`, with what building it used)
        or built under the key's lock."""
        async with self.store.claim(key):
            found = await self.store.find(key)
            if found.note:
                self.notes.append(found.note)
            if found.path is not None:
                return found.path, "hit", _usage(found.about.get("build"))
            built = await build()
        if built.layer is not None:
            return built.layer, "rebuilt" if found.note else "miss", Usage()
        if failed or not built.problems:
            return failed[0] if failed else Failed("dependency layer", None, "the layer's build failed")
        return Failed(
            "dependency layer",
            None,
            f"the dependency layer built from the index failed its check: {'; '.join(built.problems[:3])}",
        )

    def shown_to(self, workspace: Workspace) -> str:
        use = self.used.get(workspace.path)
        return use.shown if use is not None else ""

    def release(self) -> None:
        """Let every layer this run held go (the run is over)."""
        while self.releases:
            self.releases.pop()()


def maker(
    run: Run, steps: list[tuple[str, dict[str, str], bool, str]], failed: list[Failed], about: dict[str, object]
) -> Callable[[Workspace], Awaitable[bool]]:
    """What the store runs in a layer's own workspace: the steps in order
    (the first failure kept in `failed`), what they used put in `about`."""

    async def make(workspace: Workspace) -> bool:
        spent = Usage()
        for command, step_env, network, label in steps:
            result = await run(workspace, command, step_env, network)
            spent = spent + used_by(result)
            if not result.ok:
                failed.append(Failed(label, result))
                return False
        about["build"] = {
            "wall_seconds": spent.wall_seconds,
            "cpu_seconds": spent.cpu_seconds,
            "gib_seconds": spent.gib_seconds,
        }
        return True

    return make


def why(failed: Failed) -> str:
    """What a failed layer step says, in a phrase for the notes."""
    result = failed.result
    return failed.said or (
        "it failed" if result is None else f"{result.describe_end()}: {telling_line(result.output_tail)}"
    )


def _usage(kept: object) -> Usage:
    """What a layer's info says its build used (the store's own file, read
    with care all the same: anything else is no saving)."""
    if not isinstance(kept, dict):
        return Usage()
    values = [kept.get(k) for k in ("wall_seconds", "cpu_seconds", "gib_seconds")]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 1e7 for v in values):
        return Usage()
    return Usage(*(float(v) for v in values))  # type: ignore[arg-type]


def holds(resolved: Resolved) -> list[str]:
    """What a layer holds, for `gatetui cache ls`: name==version of each."""
    return sorted(line.split(" ", 1)[0] for line in resolved.pinned)
