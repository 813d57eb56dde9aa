"""`bites`: mutants of the changed lines, each run in a copy of its own.

After the suite's runs, each chosen mutant (gate/judging/mutants.py) gets a
fresh copy of the installed workspace (a fork, like the suite's runs), its
mutated module loaded from memory where the stack can (Profile's
`mutant_import`: the tree keeps head's file, so a test that reads the code
instead of running it reads head's text) or else written over head's tree,
and runs only the tests that reached its line (for a line that ran only at
import, the tests of its function's body, or the whole suite), stopping at
the first failure; as many side by side as the machine has cores. The
copies are forked one at a time and closed as each run ends. Before the
check passes on its kills, they are checked by a control (phases/control.py):
the killing tests in a mutant's run of head's own code. A mutant that
survives is searched (phases/survivors.py): an input that tells it apart
is the test the change lacks; none found makes it likely equivalent.
"""

from __future__ import annotations

import asyncio
import os

from gatetui.backends.base import Workspace, close_all
from gatetui.gate.checks import CheckId, CheckResult, Status, Verdict, decide, spec_of
from gatetui.gate.judging import reruns
from gatetui.gate.judging.mutants import Chosen, Outcome, Trial, choose, judge_bites, outcome
from gatetui.gate.judging.results import SuiteRun
from gatetui.gate.phases.context import Context
from gatetui.gate.phases.control import verified
from gatetui.gate.phases.coverage import NOT_HERE, CoverageRun
from gatetui.gate.phases.one_run import SuiteRunner, joined_env
from gatetui.gate.phases.survivors import SurvivorSearch
from gatetui.stacks.base import RunTree
from gatetui.stacks.mutant_search import Found
from gatetui.stacks.mutation import Mutant


class BitesPhase:
    def __init__(self, ctx: Context, runner: SuiteRunner, coverage: CoverageRun):
        self.ctx, self.runner, self.coverage = ctx, runner, coverage
        self._forking = asyncio.Lock()

    async def run(self, workspace: Workspace, runs: list[SuiteRun]) -> None:
        """Answer `bites` when it is still open, from head's runs."""
        ledger = self.ctx.ledger
        if CheckId.BITES not in {spec.id for spec in ledger.open()}:
            return
        failing = self._already_failing()
        if failing:
            ledger.finish(CheckResult(CheckId.BITES, Status.SKIPPED, f"not run: the change already fails ({failing})"))
            return
        chosen = self._choose(runs)
        if isinstance(chosen, str):
            ledger.finish(CheckResult(CheckId.BITES, Status.SKIPPED, chosen))
            return
        ledger.time_from_now(CheckId.BITES)
        whole = sum(1 for trial in chosen.trials if not trial.tests)
        over = f" ({whole} over the whole suite)" if whole else ""
        ledger.progress(CheckId.BITES, f"{len(chosen.trials)} mutants{over}, {parallel()} at a time")
        slots = asyncio.Semaphore(parallel())
        tried = await asyncio.gather(
            *(self._try(workspace, slots, f"mutant {i + 1}", t) for i, t in enumerate(chosen.trials))
        )
        outcomes = [found for found, _ in tried]
        found = await self._search(workspace, chosen.trials, outcomes)
        judged = judge_bites(chosen.trials, outcomes, chosen.untried, chosen.bounded, found)
        if judged.status is Status.PASS and Outcome.KILLED in outcomes and self.ctx.changed is not None:
            ledger.progress(CheckId.BITES, "the kills checked: their tests in a mutant's run of head's own code")
            outcomes = await verified(
                chosen.trials,
                tried,
                self.ctx.changed.texts,
                lambda name, trial: self._try(workspace, slots, name, trial),
                self.ctx.plan.profile.lines.twin,
            )
            judged = judge_bites(chosen.trials, outcomes, chosen.untried, chosen.bounded, found)
        ledger.finish(judged)

    async def _search(
        self, workspace: Workspace, trials: tuple[Trial, ...], outcomes: list[Outcome]
    ) -> dict[int, Found]:
        """For the survivors, inputs that tell them apart (phases/survivors.py), where the stack can search."""
        search = self.ctx.plan.profile.lines.mutant_search
        survivors = [i for i, o in enumerate(outcomes) if o is Outcome.SURVIVED]
        if search is None or not survivors:
            return {}
        self.ctx.ledger.progress(CheckId.BITES, f"{len(survivors)} survived: searching for inputs that tell them apart")
        return await SurvivorSearch(self.ctx, self.runner, search).run(workspace, trials, survivors)

    def _already_failing(self) -> str:
        """The checks that already fail the change (or found the gate's own
        error): mutants cannot change that verdict, and they cost a run each."""
        policy = self.ctx.policy_fails()
        done = list(self.ctx.ledger.in_order())
        if decide(done, policy) not in (Verdict.FAIL, Verdict.ERROR):
            return ""
        return ", ".join(
            r.id.value for r in done if spec_of(r.id).weigh(r.status, policy) in (Verdict.FAIL, Verdict.ERROR)
        )

    def _choose(self, runs: list[SuiteRun]) -> Chosen | str:
        """The trials, or why there are none."""
        profile = self.ctx.plan.profile
        if profile.lines.mutate is None or self.ctx.changed is None:
            return NOT_HERE
        if self.coverage.reached is None:
            return f"not run: coverage not measured ({self.coverage.problem or 'see covered'})"
        chosen = choose(
            self.ctx.changed,
            self.coverage.reached,
            runs,
            profile.lines.mutate,
            self.ctx.plan.policy.mutant_cap,
            self.ctx.plan.timeout,
        )
        return chosen if chosen.trials else chosen.why_none

    async def _try(
        self, workspace: Workspace, slots: asyncio.Semaphore, name: str, trial: Trial
    ) -> tuple[Outcome, SuiteRun]:
        """One mutant, from memory where the stack can. A run that could not
        start from memory (the mutated module was imported before the gate's
        plugin, as pytest imports pluggy) is run once more with the mutant
        written over the tree, as every mutant was before."""
        memory = self.ctx.plan.profile.lines.mutant_import is not None
        found = await self._once(workspace, slots, name, trial, memory)
        if memory and found[0] is Outcome.UNJUDGED:
            return await self._once(workspace, slots, name, trial, False)
        return found

    async def _once(
        self, workspace: Workspace, slots: asyncio.Semaphore, name: str, trial: Trial, memory: bool
    ) -> tuple[Outcome, SuiteRun]:
        """One mutant's run in a fresh copy, closed however it ends."""
        ctx, profile = self.ctx, self.ctx.plan.profile
        async with slots:
            async with self._forking:
                [copy] = await workspace.fork(
                    1, ctx.export_head, profile.install.environment, network=ctx.plan.policy.test_network
                )
            try:
                mutated = {trial.mutant.path: trial.mutant.source}
                env = await self._apply(copy, trial.mutant, memory)
                run = await self.runner.run(
                    copy,
                    CheckId.BITES,
                    name,
                    env,
                    reruns.command(profile.suite.command, list(trial.tests)),
                    RunTree(ctx.plan.head, mutated),
                    timeout=trial.timeout,
                )
            finally:
                await close_all([copy])
        return outcome(run, profile.suite.cannot_start), run

    async def _apply(self, copy: Workspace, mutant: Mutant, memory: bool) -> dict[str, str]:
        """The mutant put where its run loads it; the run's own variables.
        From memory where the stack can (its file stays head's, so a test
        that reads the code instead of running it reads head's text), else
        written over the tree."""
        profile = self.ctx.plan.profile
        fail_fast = dict(profile.lines.coverage.fail_fast) if profile.lines.coverage is not None else {}
        if profile.lines.mutant_import is None or not memory:
            await copy.write_files({mutant.path: mutant.source})
            return fail_fast
        return joined_env(await self.runner.plugin(copy, profile.lines.mutant_import(mutant)), fail_fast)


def parallel() -> int:
    """Mutant runs side by side: the machine's cores."""
    return max(1, os.cpu_count() or 1)
