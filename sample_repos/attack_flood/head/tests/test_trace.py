"""Prints 200 MB straight to the terminal, to bury the failure or the supervisor."""
import sys


def test_verbose_trace(capsys):
    line = "x" * 1023 + "\n"
    with capsys.disabled():
        for _ in range(200 * 1024):
            sys.stdout.write(line)
