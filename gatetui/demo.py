"""`gatetui demo` without a terminal UI: every sample gated, caught cheats printed.

Workshops without a TTY (CI, a projector fed by a pipe) still see each cheat
caught, one sample after another, with what the scenario expected.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import TextIO

from gatetui.backends.local import LocalBackend
from gatetui.errors import BadInput, ExitCode, GateError
from gatetui.gate.plan import GateRequest
from gatetui.render import verdict_block
from gatetui.samples import SampleError, write_all


def run_demo(dest: Path, out: TextIO, err: TextIO) -> int:
    try:
        written = write_all(dest)
    except SampleError as error:
        raise BadInput(str(error)) from None
    from gatetui.cli import gate_once

    mismatches = 0
    for scenario, path in written:
        print(f"\n== {scenario.name}: {scenario.title}\n   {scenario.story}", file=out, flush=True)
        request = GateRequest(path, "main", f"agent/{scenario.name}")
        try:
            _, finished = asyncio.run(gate_once(request, LocalBackend(), io.StringIO()))
        except GateError as error:
            print(f"   gatetui: {error}", file=out)
            mismatches += 1
            continue
        print("   " + verdict_block(finished).replace("\n", "\n   "), file=out)
        if finished.verdict.value != scenario.verdict:
            mismatches += 1
            print(f"   (the scenario expects {scenario.verdict})", file=out)
    print(f"\n{len(written)} samples gated, {mismatches} differ from their scenario", file=err)
    return ExitCode.PASS if mismatches == 0 else ExitCode.FAIL
