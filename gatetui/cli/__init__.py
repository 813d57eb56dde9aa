"""argparse and the commands (main.py); `gatetui.cli.main:entry` is the console script."""
