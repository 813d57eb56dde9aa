"""When the test runner refuses to start, and whose fault that is.

A runner that exits with a usage error before it writes a report (pytest's
exit 4: an unknown option in `addopts`, a plugin the settings name but no
dependency installs) has judged nothing. If base's own suite, on base's own
install, refuses the same way, the project's setup is broken, not the
change: that is the gate's `error` (exit 3), with the runner's own words and
the setting that fixes it, never a `fail` held against the agent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from gatetui.gate.judging.results import SuiteRun

ERROR_LINE = re.compile(r"(?i)\berror: (.+)$", re.MULTILINE)
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def refused(runs: Sequence[SuiteRun], codes: tuple[int, ...]) -> bool:
    """Every run ended before any report, with one of the runner's
    could-not-start codes."""
    return (
        bool(runs)
        and bool(codes)
        and all(r.report is None and not r.result.timed_out and r.result.exit_code in codes for r in runs)
    )


def runners_words(output: str) -> str:
    """The runner's own error line (`unrecognized arguments: --cov`), else
    its last line."""
    found = ERROR_LINE.findall(output)
    if found:
        return str(found[-1]).strip()[:300]
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


def explain(words: str, plugins: Mapping[str, str], fix: str) -> str:
    """Why base's suite cannot start either, and what to change."""
    said = (
        f"the suite cannot start at base either, so it is the project's setup, not this change: "
        f"the runner says `{words}`"
    )
    options = OPTION.findall(words.split(":", 1)[-1])
    provided = [(o, plugins[o]) for o in options if o in plugins]
    if provided:
        option, plugin = provided[0]
        said += f"; {option} comes from {plugin}, which the install does not bring"
    return f"{said}: {fix}, then gate again"
