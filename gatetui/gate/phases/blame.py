"""Whose a failed install is. An install that fails at head is the change's
fault only if base installs: a project whose base fails the same way (a
dependency gone from the index, a build that needs a tool this machine
lacks) is an error for a person, not a mark against the agent."""

from __future__ import annotations

from gatetui.gate.checks import CheckId, CheckResult, Status
from gatetui.gate.install.steps import Failed, telling_line
from gatetui.gate.phases.context import Context

MAX_STEP = 120  # characters of a command shown in a detail


async def install_failed(ctx: Context, failed: Failed) -> CheckResult:
    """The install check's answer; the import check is head's own code:
    never compared with base."""
    result, step = failed.result, shown_step(ctx, failed.step)
    if result is not None and result.timed_out:
        return _install(Status.ERROR, f"{step} {result.describe_end()}: raise the time limit (--timeout)")
    said = (
        failed.said
        if result is None
        else f"{step} failed ({result.describe_end()}): {telling_line(result.output_tail)}"
    )
    if failed.heads_own:
        return _install(Status.FAIL, said)
    ctx.ledger.progress(CheckId.INSTALL, "failed at head; installing base the same way, to tell whose it is")
    at_base = await base_install(ctx, verify=result is None)
    if at_base is None:
        return _install(Status.FAIL, f"{said}; base installs")
    if at_base == failed.step:
        return _install(
            Status.ERROR,
            f"{said}; base fails the same install, so it is the project or this "
            "machine, not this change: make base install, then gate again",
        )
    return _install(Status.FAIL, f"{said}; base's install could not tell ({at_base})")


def shown_step(ctx: Context, step: str) -> str:
    """A step as a person reads it: the project's own command as written,
    the gate's own steps by what they do (their commands run to a page of
    shell, and say nothing in a one-line detail)."""
    deps = ctx.plan.profile.install.dependencies
    named = (
        {}
        if deps is None
        else {
            deps.resolve: "the dependency resolve",
            deps.local: "the install of the tree's other projects",
            deps.pinned: "the install of the pinned dependencies",
        }
    )
    if step in named:
        return named[step]
    return f"`{step}`" if len(step) <= MAX_STEP else f"`{step[:MAX_STEP].rstrip()}…`"


async def base_install(ctx: Context, verify: bool) -> str | None:
    """Base installed in a workspace of its own (its environment checked
    when head's check was what failed): None when it installs, else the
    step it failed on (or why it could not tell)."""
    async with ctx.base_workspace("base-install") as workspace:
        failed = await ctx.installer(CheckId.INSTALL, "base install", ctx.plan.base).install(workspace, verify)
    if failed is None:
        return None
    if failed.result is not None and failed.result.timed_out:
        return f"base's `{failed.step}` {failed.result.describe_end()}"
    return failed.step


def _install(status: Status, detail: str) -> CheckResult:
    return CheckResult(CheckId.INSTALL, status, detail)
