"""argparse and the commands; `entry` is the console script."""

from gatetui.cli.main import entry, main

__all__ = ["entry", "main"]
