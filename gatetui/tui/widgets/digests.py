"""Digest state: what exactly a verdict judged, and whether it is still the tip."""

from __future__ import annotations

from typing import Any

from textual.widgets import Static

from gatetui.gate.sealing.digests import Digests
from gatetui.inert import inert
from gatetui.supervise.runs import Branch, Run
from gatetui.tui.format import one_line, short


class DigestPanel(Static):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(markup=False, **kwargs)  # paths and test ids are not markup: `test_x[1]`

    def show(self, branch: Branch | None, run: Run | None) -> None:
        self.update(inert(digest_text(branch, run)))  # head's file names and test ids in it


def digest_text(branch: Branch | None, run: Run | None) -> str:
    if branch is None or run is None or run.digests is None:
        return "digests: no run yet"
    d = run.digests
    sealed = "intact" if d.sealed_intact else "changed: " + ", ".join(d.sealed_changed)
    files = ", ".join(d.manifest_files) or "none"
    stale = f"STALE: tip is now {short(branch.head)}" if run.head != branch.head else "(branch tip)"
    seal = f"{run.seal[:16]}… (HMAC)" if run.seal else "not sealed yet"
    judge = f"\njudge changed {', '.join(d.judge_changed)}" if d.judge_changed else ""
    return (
        f"base      {short(d.base)}\nhead      {short(d.head)}  {stale}\n"
        f"sealed    base {d.sealed_base[:12]}  head {d.sealed_head[:12]}\n"
        f"          {sealed}\nmanifest  {d.manifest[:12]} ({files}){'  ' + d.cache_words if d.layer else ''}"
        f"\nseal      {seal}{judge}"
        f"{judged_by(run.record, d)}"
    )


def judged_by(record: dict[str, Any] | None, d: Digests) -> str:
    """Which rule judged `runs` and `old_tests`, and the inputs that a
    person needs to replay the verdict: the random order's seed, how many
    hidden test files, whether the tests had the network. Empty for a
    plain run whose record says nothing of them."""
    baseline = (record or {}).get("baseline")
    lines = [f"rule      {rule_words(baseline)}"] if isinstance(baseline, dict) else []
    inputs = [f"random order seed {d.random_seed}"] if d.random_seed is not None else []
    if d.hidden:
        inputs.append(f"hidden tests: {d.hidden_files} file{'s' if d.hidden_files != 1 else ''} ({d.hidden[:12]})")
    if d.test_network:
        inputs.append("test runs had the network")
    if inputs:
        lines.append(f"inputs    {'; '.join(inputs)}")
    return "".join(f"\n{one_line(line, 120)}" for line in lines)


def rule_words(baseline: dict[str, Any]) -> str:
    """`strict`, or `baseline` with the failures base already had."""
    if baseline.get("rule") != "baseline":
        problem = str(baseline.get("problem") or "")
        return f"strict (baseline not usable: {problem})" if problem else "strict: every test must pass"
    known = [str(name) for name in baseline.get("known_failures") or ()]
    cached = ", cached" if baseline.get("cached") else ""
    names = f": {', '.join(known)}" if known else ""
    return f"baseline: {len(known)} known failure{'s' if len(known) != 1 else ''} at base{cached}{names}"
