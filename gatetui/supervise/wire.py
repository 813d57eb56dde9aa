"""Runs and branches as JSON for the watch stream, and back, whole.

A viewer draws the same screens as the supervisor's own, from its own
copy of the runs: so every field a screen reads travels, with its value
unrounded (the store's record rounds cost figures for people; a viewer
whose credit table read differently from the supervisor's own would be
wrong). Strings are head's text unchanged: the screen that shows them makes
them inert, as it does for the supervisor's own. No Textual here.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gatetui.gate.checks import CheckId, Status
from gatetui.gate.cost import Cost, Usage
from gatetui.gate.sealing.digests import Digests, RuleDigest
from gatetui.supervise.run_states import RunState
from gatetui.supervise.runs import Branch, CheckRow, LogBuffer, Run

RECORD_KEYS = ("baseline",)  # what the screens read of a run's stored record


def run_to_wire(run: Run, logs: bool = False) -> dict[str, Any]:
    """A run's whole state; with `logs`, the lines it keeps of each check."""
    data: dict[str, Any] = {
        "run_id": run.run_id,
        "branch": run.branch,
        "head": run.head,
        "status": str(run.status),
        "base": run.base,
        "backend": run.backend,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "seconds": run.seconds,
        "checks": [[r.check.value, r.status.value, r.detail, r.started, r.seconds] for r in run.checks.values()],
        "digests": None if run.digests is None else dataclasses.asdict(run.digests),
        "cost": cost_to_wire(run.cost),
        "notes": list(run.notes),
        "message": run.message,
        "seal": run.seal,
        "review": run.review,
        "record": {k: run.record[k] for k in RECORD_KEYS if k in run.record} if run.record else None,
        "stopped": run.stopped,
    }
    if logs:
        data["logs"] = {check.value: [buffer.total, list(buffer.lines)] for check, buffer in run.logs.items()}
    return data


def run_from_wire(data: dict[str, Any]) -> Run:
    run = Run(
        run_id=str(data["run_id"]),
        branch=str(data["branch"]),
        head=str(data["head"]),
        status=RunState.of_record(data["status"]),
        base=str(data["base"]),
        backend=str(data["backend"]),
        started_at=float(data["started_at"]),
        finished_at=data["finished_at"],
        seconds=data["seconds"],
        digests=None if data["digests"] is None else digests_from_wire(data["digests"]),
        cost=cost_from_wire(data["cost"]),
        notes=tuple(data["notes"]),
        message=str(data["message"]),
        seal=str(data["seal"]),
        review=str(data["review"]),
        record=data["record"],
        stopped=bool(data["stopped"]),
    )
    for check, status, detail, started, seconds in data["checks"]:
        row = CheckRow(CheckId(check), Status(status), detail, started, seconds)
        run.checks[row.check] = row
    for check, (total, lines) in (data.get("logs") or {}).items():
        run.logs[CheckId(check)] = log_buffer(total, lines)
    return run


def branch_to_wire(branch: Branch, submits_used: int) -> dict[str, Any]:
    """A branch, its runs named by id (their state travels apart)."""
    return {
        "name": branch.name,
        "head": branch.head,
        "at_base": branch.at_base,
        "escalated": branch.escalated,
        "submits_used": submits_used,
        "runs": [run.run_id for run in branch.runs],
    }


def branch_from_wire(data: dict[str, Any], runs: dict[str, Run]) -> Branch:
    """The branch, with the runs of `runs` its ids name (in its order)."""
    known = [runs[run_id] for run_id in data["runs"] if run_id in runs]
    return Branch(str(data["name"]), str(data["head"]), bool(data["at_base"]), known, bool(data["escalated"]))


def cost_to_wire(cost: Cost) -> dict[str, Any]:
    return {
        "per_check": {k: dataclasses.astuple(u) for k, u in cost.per_check.items()},
        "measured": cost.measured,
        "account": dict(cost.account),
        "saved": {k: dataclasses.astuple(u) for k, u in cost.saved.items()},
    }


def cost_from_wire(data: dict[str, Any]) -> Cost:
    return Cost(
        per_check={k: Usage(*u) for k, u in data["per_check"].items()},
        measured=bool(data["measured"]),
        account=dict(data["account"]),
        saved={k: Usage(*u) for k, u in data["saved"].items()},
    )


def digests_from_wire(data: dict[str, Any]) -> Digests:
    """`dataclasses.asdict` undone: lists back to tuples, rules to RuleDigest."""
    rules = tuple(RuleDigest(**_tuples(rule)) for rule in data["rules"])
    return Digests(**_tuples({k: v for k, v in data.items() if k != "rules"}), rules=rules)


def _tuples(data: dict[str, Any]) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}


def log_buffer(total: int, lines: list[str]) -> LogBuffer:
    """A check's kept lines as the supervisor holds them (`total` counts those it dropped)."""
    buffer = LogBuffer()
    buffer.lines.extend(lines)
    buffer.total = total
    return buffer
