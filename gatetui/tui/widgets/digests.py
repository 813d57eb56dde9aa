"""Digest state: what exactly a verdict judged, and whether it is still the tip."""

from __future__ import annotations

from textual.widgets import Static

from gatetui.supervisor import Branch, Run
from gatetui.tui.format import short


class DigestPanel(Static):
    def show(self, branch: Branch | None, run: Run | None) -> None:
        self.update(digest_text(branch, run))


def digest_text(branch: Branch | None, run: Run | None) -> str:
    if branch is None or run is None or run.digests is None:
        return "digests: no run yet"
    d = run.digests
    sealed = "intact" if d.sealed_intact else "changed: " + ", ".join(d.sealed_changed)
    files = ", ".join(d.manifest_files) or "none"
    stale = (f"STALE: tip is now {short(branch.head)}" if run.head != branch.head
             else "(branch tip)")
    seal = f"{run.seal[:16]}… (HMAC)" if run.seal else "not sealed yet"
    judge = f"\njudge changed {', '.join(d.judge_changed)}" if d.judge_changed else ""
    return (f"base      {short(d.base)}\nhead      {short(d.head)}  {stale}\n"
            f"sealed    base {d.sealed_base[:12]}  head {d.sealed_head[:12]}\n"
            f"          {sealed}\nmanifest  {d.manifest[:12]} ({files})\nseal      {seal}{judge}")
