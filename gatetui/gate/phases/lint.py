"""The profile's lint (go vet) judged as the runs are: against base.

A real project's base can already have findings (an `Example` named after
nothing): failing the install on any finding made every change to it an
error, honest or not, and dropping them would hide what a change adds. So
head's findings are compared with base's by the keys the stack gives (the
same finding wherever lines moved it), counted: a finding head adds fails
the install, named; those base has too are told in the detail. Base's are
asked only when head has any: base's tree installed and linted the same
way in a workspace of its own, the answer cached per base commit and
profile (a supervisor pays once per base, as for base's own suite).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gatetui.errors import GateError
from gatetui.gate.checks import CheckId
from gatetui.gate.judging.baseline import BaselineCache
from gatetui.gate.phases.context import Context
from gatetui.stacks.lint import Lint

FORMAT = 1  # bump when what is cached changes
SHOWN = 5  # findings named in a detail; the rest counted


@dataclass(frozen=True)
class Linted:
    failed: bool  # head adds a finding (or base's could not be told)
    said: str  # for the install's detail; "" when head has none


async def judge(ctx: Context, found: Counter[str]) -> Linted:
    """Head's findings (`found`, by key) against base's."""
    lint = ctx.plan.profile.install.lint
    if lint is None or not found:
        return Linted(False, "")
    at_base = await base_findings(ctx, lint)
    if isinstance(at_base, str):
        return Linted(
            True, f"{lint.label}: {_count(found)} at head, and base's could not be told ({at_base}): {_shown(found)}"
        )
    added, known = found - at_base, found & at_base
    if added:
        more = f"; and {_count(known)} that base has too" if known else ""
        return Linted(True, f"{lint.label}: head adds {_count(added)}: {_shown(added)}{more}")
    return Linted(False, f"{lint.label}: {_count(known)} that base has too, not this change's: {_shown(known)}")


async def base_findings(ctx: Context, lint: Lint) -> Counter[str] | str:
    """Base's findings, from the cache or measured; else why not."""
    plan = ctx.plan
    cache, key = plan.request.baseline_cache, _cache_key(ctx, lint)
    cached = _cached(cache, key, plan.base.sha)
    if cached is not None:
        return cached
    ctx.ledger.progress(
        CheckId.INSTALL,
        f"{lint.label} has findings at head; installing base the same way, to tell which are the change's",
    )
    installer = ctx.installer(CheckId.INSTALL, "base lint", plan.base)
    async with ctx.base_workspace("base-lint") as workspace:
        failed = await installer.install(workspace, verify=False)
    if failed is not None:
        end = failed.said if failed.result is None else failed.result.describe_end()
        return f"base's `{failed.step}` {end}"
    if cache is not None:  # a cache that cannot be written is a miss next time, not the gate's failure
        with contextlib.suppress(OSError, ValueError, GateError):
            cache.put(key, {"format": FORMAT, "base": plan.base.sha, "findings": dict(installer.found)})
    return installer.found


def _cache_key(ctx: Context, lint: Lint) -> str:
    """Base's commit and what decides its findings besides its tree."""
    profile = ctx.plan.profile
    shown = json.dumps(
        {"format": FORMAT, "install": list(profile.install.commands), "env": profile.install.env, "lint": lint.command},
        sort_keys=True,
    )
    return f"lint-{ctx.plan.base.sha}-{hashlib.sha256(shown.encode()).hexdigest()[:16]}"


def _cached(cache: BaselineCache | None, key: str, base: str) -> Counter[str] | None:
    """A cached record that is this base's and well formed; anything else is a miss."""
    data: Mapping[str, Any] | None = None
    if cache is not None:
        with contextlib.suppress(OSError, ValueError, GateError):
            data = cache.get(key)
    if not isinstance(data, Mapping) or data.get("format") != FORMAT or data.get("base") != base:
        return None
    findings = data.get("findings")
    if not isinstance(findings, Mapping) or not all(
        isinstance(k, str) and isinstance(n, int) and n > 0 for k, n in findings.items()
    ):
        return None
    return Counter(dict(findings))


def _count(found: Counter[str]) -> str:
    total = sum(found.values())
    return f"{total} finding{'' if total == 1 else 's'}"


def _shown(found: Counter[str]) -> str:
    """The first few findings by key (a repeated one with its count), then how many more."""
    keys = sorted(found)
    shown = "; ".join(key if found[key] == 1 else f"{key} (x{found[key]})" for key in keys[:SHOWN])
    more = sum(found[key] for key in keys[SHOWN:])
    return shown + (f"; and {more} more" if more else "")
