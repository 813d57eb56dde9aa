"""The local backend driven by hand: a workspace's files, one command's result
and output, and the fork modes this machine offers (a test of a mode it
lacks is skipped, saying why)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatetui.backends.local import probe_fork_mode
from gatetui.backends.local_workspace import LocalWorkspace


def export_files(files: dict[str, str]):  # type: ignore[no-untyped-def]
    def export(dest: Path) -> None:
        dest.mkdir()
        for rel, text in files.items():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_text(text)

    return export


async def run(
    ws: LocalWorkspace,
    command: str,
    timeout: float = 30,
    env: dict[str, str] | None = None,  # type: ignore[no-untyped-def]
    network: bool = True,
):
    chunks: list[str] = []
    result = await ws.run(command, timeout=timeout, on_output=chunks.append, env=env, network=network)
    return result, "".join(chunks)


def fork_mode_or_skip(mode: str) -> str:
    """The mode, where this machine can make copies that way."""
    if mode != "swap" and probe_fork_mode() == "swap":
        pytest.skip("this machine allows no mount namespace (not root, no user namespaces)")
    if mode == "overlay" and probe_fork_mode() != "overlay":
        pytest.skip("this machine refuses overlay mounts in a mount namespace")
    return mode
