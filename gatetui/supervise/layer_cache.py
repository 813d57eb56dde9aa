"""`gatetui cache ls|prune`: the dependency layers kept between gates.

Where they live: the supervisor's state directory's `layers/` (`serve`, the
TUI), and the cache folder of one-shot checks (GATETUI_CACHE_DIR, else
$XDG_CACHE_HOME/gatetui, `layers/` inside: `check` only reads a state
directory). Without
--state-dir both places are listed. `--backend runtime`: the layers kept as
snapshots on the Runtime account instead (backends/runtime_shelf.py). Exit
0 done, 2 bad input (a folder that is not the user's own, a number of days
that is not one), 3 Runtime could not be asked (no key, no answer).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, Protocol

from gatetui.backends.layers import LayerInfo, LayerShelf, default_cache_dir
from gatetui.errors import ExitCode
from gatetui.supervise.state_dir import default_state_dir

LAYERS = "layers"


class Shelf(Protocol):
    """Layers kept somewhere, as `cache` lists and removes them."""

    @property
    def where(self) -> str: ...

    def listing(self) -> list[LayerInfo]: ...

    def prune(self, older_than_days: float | None) -> tuple[list[str], list[str]]: ...


def layers_for_state(state_dir: Path | None) -> Path:
    """Where a supervisor with this state directory keeps its layers."""
    return (state_dir or default_state_dir()) / LAYERS


def layers_for_check() -> Path:
    """Where a one-shot `gatetui check` keeps them: the cache folder, even
    with --state-dir (check only reads a state directory)."""
    return default_cache_dir() / LAYERS


def add_cache_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "cache", help="list or remove the dependency layers kept between gates"
    )
    sub = parser.add_subparsers(dest="cache_command", metavar="ls|prune", required=True)
    ls = sub.add_parser("ls", help="every kept layer: key, size, age, last use, what it holds")
    ls.add_argument("--json", action="store_true", help="one JSON array on stdout")
    prune = sub.add_parser("prune", help="remove layers (never one a running gate holds)")
    which = prune.add_mutually_exclusive_group(required=True)
    which.add_argument("--older-than", type=_days, metavar="DAYS", help="those unused for more than DAYS days")
    which.add_argument("--all", action="store_true", help="every layer")
    for command in (ls, prune):
        command.add_argument(
            "--state-dir",
            type=Path,
            metavar="DIR",
            help="only the layers of the supervisor "
            "with this state directory (default: its default one and the check cache)",
        )
        command.add_argument(
            "--backend",
            choices=("local", "runtime"),
            default="local",
            help="runtime: the layers kept as snapshots on your Runtime account",
        )
    return parser


def _days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        days = -1.0
    if not days >= 0 or days == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days, 0 or more")
    return days


def shelves(state_dir: Path | None) -> list[LayerShelf]:
    roots = (
        [layers_for_state(state_dir)]
        if state_dir is not None
        else [layers_for_state(None), default_cache_dir() / LAYERS]
    )
    return [LayerShelf(root) for root in dict.fromkeys(roots) if root.exists() or state_dir is not None]


def cmd_cache(args: argparse.Namespace) -> int:
    found: list[Shelf] = list(shelves(args.state_dir))
    if args.backend == "runtime":
        from gatetui.backends.runtime_shelf import SnapshotShelf

        found = [SnapshotShelf()]
    if args.cache_command == "ls":
        rows = [(shelf.where, layer) for shelf in found for layer in shelf.listing()]
        if args.json:
            print(json.dumps([{**layer.to_json(), "where": where} for where, layer in rows], indent=2))
        else:
            print(listing_text(rows))
        return ExitCode.PASS
    gone: list[str] = []
    busy: list[str] = []
    for shelf in found:
        removed, left = shelf.prune(None if args.all else args.older_than)
        gone += removed
        busy += left
    print(
        f"removed {len(gone)} layer{'s' if len(gone) != 1 else ''}"
        + (f"; {len(busy)} in use by a running gate, kept" if busy else "")
    )
    return ExitCode.PASS


def listing_text(rows: list[tuple[str, LayerInfo]], now: float | None = None) -> str:
    if not rows:
        return "no dependency layers kept"
    now = time.time() if now is None else now
    lines = [f"{'KEY':12}  {'SIZE':>9}  {'AGE':>6}  {'LAST USE':>8}  HOLDS"]
    for where, layer in rows:
        holds = ", ".join(layer.holds[:3]) + (f" and {len(layer.holds) - 3} more" if len(layer.holds) > 3 else "")
        holds = f"{layer.kind}: {holds}" if layer.kind != "dependencies" and holds else holds
        lines.append(
            f"{layer.key[:12]}  {_size(layer.size):>9}  {_age(now - layer.built):>6}  "
            f"{_age(now - layer.used):>8}  {holds or '-'}  ({where})"
        )
    return "\n".join(lines)


def _size(count: int) -> str:
    if count <= 0:
        return "-"  # not said (Runtime does not give a snapshot's size)
    value = float(count)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def _age(seconds: float) -> str:
    seconds = max(0.0, seconds)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"
