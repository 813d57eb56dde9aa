"""The layer of what head's build imports (stacks/build_tools.py), from the
same store as the dependency layers: resolved where nothing of head's has
run, built once per pinned set, verified, and shown read-only to the
install's workspace before head's first build; its builds then run against
it (the profile's swaps) instead of each making an environment of its own.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from gatetui.backends.base import LayerBuild, LayerUnavailable, Workspace
from gatetui.gate.install.layers import LayerSteps, holds, maker, why
from gatetui.gate.install.steps import Failed, telling_line
from gatetui.stacks.base import ReportProblem, Resolved
from gatetui.stacks.build_tools import BuildTools

TOOLS_REPORT = "build-tools.toml"
OWN_WAY = "head's builds made their own environments"


async def tools_swaps(
    layers: LayerSteps, workspace: Workspace, tools: BuildTools, files: Mapping[str, bytes], env: dict[str, str]
) -> dict[str, str]:
    """The commands to run in place of the builds' own (BuildTools.swaps)
    while the layer of the tools head's build declares is shown to the
    workspace; {} where there is none (nothing declared that a layer can
    hold, a store that would move the workspace to show it, or a resolve
    or build that failed: the notes say which), and each build makes its
    own environment as before."""
    lines = tools.requires(files)
    if lines is None or layers.store.moves_to_show:
        return {}
    resolved = await _resolved(layers, workspace, tools, lines, env)
    if resolved is None:
        return {}
    key = tools.key(resolved, await layers.store.interpreter(tools.interpreter, workspace))
    *first, last = tools.build
    steps = [(step.replace("{layer}", tools.folder), env, True, step) for step in first]
    try:
        steps.append((tools.pinned_command(last, resolved).replace("{layer}", tools.folder), env, True, last))
    except ReportProblem as err:
        layers.notes.append(f"no build tools layer: {err}; {OWN_WAY}")
        return {}
    failed: list[Failed] = []
    about: dict[str, object] = {"holds": holds(resolved), "kind": "build tools"}
    try:
        got = await layers.held(
            key,
            lambda: layers.store.build(
                LayerBuild(key, tools.folder, maker(layers.run, steps, failed, about), tools.verify, about), workspace
            ),
            failed,
        )
        if isinstance(got, Failed):
            layers.notes.append(f"no build tools layer: {why(got)}; {OWN_WAY}")
            return {}
        shown = await workspace.show_layer(got[0])
    except LayerUnavailable as err:
        layers.notes.append(f"no build tools layer: {err}; {OWN_WAY}")
        return {}
    return {command: swap.replace("{tools}", shlex.quote(shown)) for command, swap in tools.swaps.items()}


async def _resolved(
    layers: LayerSteps, workspace: Workspace, tools: BuildTools, lines: tuple[str, ...], env: dict[str, str]
) -> Resolved | None:
    """The declared build tools pinned from the index; None (and a note
    when something failed) where no layer can hold them."""
    command = tools.resolve.replace("{requirements}", shlex.join(lines)).replace(
        "{report}", shlex.quote(workspace.report_path(TOOLS_REPORT))
    )
    result = await layers.run(workspace, command, env, True)
    if not result.ok:
        layers.notes.append(
            f"no build tools layer: their resolve failed ({result.describe_end()}: "
            f"{telling_line(result.output_tail)}); {OWN_WAY}"
        )
        return None
    try:
        resolved = tools.read(await workspace.read_report(TOOLS_REPORT), workspace.path)
    except ReportProblem as err:
        layers.notes.append(f"no build tools layer: {err}; {OWN_WAY}")
        return None
    return resolved if resolved.pinned and not resolved.local and not resolved.direct else None
