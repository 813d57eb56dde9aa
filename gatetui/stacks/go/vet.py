"""`go vet`'s findings, read so that base's and head's can be compared.

A real library's base can already have vet findings (an `Example` named
after an identifier that is not there): failing the install on any finding
made every change to it an error, honest or not. So vet runs as the
profile's `lint` (stacks/lint.py): `go vet -json` exits 0 with findings,
non-zero only when a package cannot be vetted (a test file that does not
compile: the install fails, as on any step), and the gate compares the
findings with base's.

What a line added above a finding does is move it, so a finding is keyed
by its file (relative to the tree), message and analyzer, never by its
line: `stats_test.go: ExampleNoSuch refers to unknown identifier: NoSuch
(tests)`. The report is the toolchain's, written while no code of head's
runs, yet read as hostile all the same: bounded, and anything not of the
expected shape is skipped or refused, never trusted to raise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping

from gatetui.stacks.base import ReportProblem
from gatetui.stacks.lint import Lint

MAX_BYTES = 16 * 2**20
MAX_FINDINGS = 100_000
REPORT = "vet.json"
# a position inside a message (structtag's "also at ./a.go:12"): lines move
POSITION = re.compile(r"(\.go):\d+(?::\d+)?")
LINE_COL = re.compile(r":\d+(?::\d+)?$")


def read_vet(raw: bytes | None, root: str) -> list[str]:
    """One key per finding of `go vet -json`'s report (the tree at `root`);
    ReportProblem when there is no report or it holds no vet output."""
    if raw is None:
        raise ReportProblem("go vet wrote no report")
    if len(raw) > MAX_BYTES:
        raise ReportProblem(f"go vet's report is over {MAX_BYTES >> 20} MiB: not read")
    text = raw.decode("utf-8", "replace")
    blocks = list(_blocks(text))
    if not blocks and text.strip():
        raise ReportProblem(f"go vet's report holds no JSON: {text.strip().splitlines()[0][:200]}")
    keys = [key for block in blocks for key in _keys(block, root.rstrip("/") + "/")]
    if len(keys) > MAX_FINDINGS:
        raise ReportProblem(f"go vet reported over {MAX_FINDINGS} findings: not read")
    return keys


def _blocks(text: str) -> Iterator[Mapping[str, object]]:
    """The JSON objects vet prints, one per package, each after a `# pkg` line."""
    decoder, at = json.JSONDecoder(), 0
    while (start := text.find("{", at)) != -1:
        try:
            block, at = decoder.raw_decode(text, start)
        except ValueError:
            at = start + 1
            continue
        if isinstance(block, Mapping):
            yield block


def _keys(block: Mapping[str, object], root: str) -> Iterator[str]:
    """{package: {analyzer: [{posn, message}] or {error}}} as keys."""
    for analyzers in block.values():
        if not isinstance(analyzers, Mapping):
            continue
        for analyzer, found in analyzers.items():
            if isinstance(found, Mapping):  # the analyzer itself failed on the package
                yield f"{_clean(str(found.get('error', '')), root)} ({analyzer})"
            elif isinstance(found, list):
                yield from (_key(item, str(analyzer), root) for item in found if isinstance(item, Mapping))


def _key(item: Mapping[str, object], analyzer: str, root: str) -> str:
    where = LINE_COL.sub("", str(item.get("posn", "")))
    where = where[len(root) :] if where.startswith(root) else where
    return f"{where}: {_clean(str(item.get('message', '')), root)} ({analyzer})"


def _clean(message: str, root: str) -> str:
    """The message without the tree's path or any line in it: the same at base."""
    return POSITION.sub(r"\1", message.replace(root, "")).replace("\n", " ")


def vet_lint(env: str) -> Lint:
    """`go vet -json` after the build, with the build's own variables
    (`env`: the exports the install begins with, its caches shared); its
    JSON goes to the report, and is shown on the stream only when vet
    could not finish (its reasons are then in it)."""
    command = (
        f"{env} && {{ go vet -json ./... 2> {{report}}; status=$?; "
        "[ $status -eq 0 ] || cat {report} >&2; exit $status; }"
    )
    return Lint(command=command, report=REPORT, read=read_vet, label="go vet")
