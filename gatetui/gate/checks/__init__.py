"""The gate's checks: their words (vocabulary.py), what each declares about
itself (spec.py, registry.py) and the verdict they fold into (verdict.py).

Every consumer imports from here; the names below are the package's API.
"""

from __future__ import annotations

from gatetui.gate.checks.registry import BY_ID, CHECK_ORDER, SPECS, TITLES, announced_at, spec_of
from gatetui.gate.checks.spec import SEVERITY, CheckSpec, Counts, Need, Phase
from gatetui.gate.checks.verdict import decide
from gatetui.gate.checks.vocabulary import DIFF_ONLY, CheckId, CheckResult, Status, Verdict

__all__ = [
    "BY_ID",
    "CHECK_ORDER",
    "DIFF_ONLY",
    "SEVERITY",
    "SPECS",
    "TITLES",
    "CheckId",
    "CheckResult",
    "CheckSpec",
    "Counts",
    "Need",
    "Phase",
    "Status",
    "Verdict",
    "announced_at",
    "decide",
    "spec_of",
]
