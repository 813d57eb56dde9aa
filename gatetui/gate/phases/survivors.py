"""After `bites`' runs: for each surviving mutant of a plain function, an
input that tells it apart from head's code, or none (stacks/mutant_search.py).

Per function (at most FUNCTIONS of them, the survivors' first), two fresh
copies of the install: in the first, the tests that reached the survivors'
lines run over head with the stack's recorder, which writes the calls they
made; in the second, where no test of head's runs, the stack's search
tries inputs around those calls on head's function and on each mutant's.
The two are apart so that nothing a test does (to the install, to the
interpreter) reaches the search. A function the stack cannot search, no
call recorded, a run that fails or a reply that does not read: no answer,
and the survivor stays as it was.
"""

from __future__ import annotations

from collections.abc import Sequence

from gatetui.backends.base import Workspace, close_all
from gatetui.gate.checks import CheckId
from gatetui.gate.judging import reruns
from gatetui.gate.judging.mutants import Trial, functions
from gatetui.gate.phases.context import Context
from gatetui.gate.phases.one_run import SuiteRunner
from gatetui.stacks.mutant_search import Call, Found, MutantSearch, SearchJob, read_calls, read_found

FUNCTIONS = 3  # functions searched at most per gate
SEARCH_SECONDS = 120.0  # one function's search, its mutants together


class SurvivorSearch:
    def __init__(self, ctx: Context, runner: SuiteRunner, search: MutantSearch):
        self.ctx, self.runner, self.search = ctx, runner, search

    async def run(self, workspace: Workspace, trials: Sequence[Trial], survivors: Sequence[int]) -> dict[int, Found]:
        """Trial index -> what the search found, for the survivors it could search."""
        found: dict[int, Found] = {}
        for number, ((path, function), indices) in enumerate(self._groups(trials, survivors)[:FUNCTIONS]):
            chosen = [trials[i] for i in indices]
            calls = await self._record(workspace, number, path, function, chosen)
            if calls is None or not calls[1]:
                continue
            job = SearchJob(calls[0], function, calls[1], {str(i): trials[i].mutant for i in indices})
            answers = await self._search(workspace, number, job)
            found.update({int(key): answer for key, answer in answers.items()})
        return found

    def _groups(self, trials: Sequence[Trial], survivors: Sequence[int]) -> list[tuple[tuple[str, str], list[int]]]:
        """The survivors by the plain function they are in, in trial order."""
        changed = self.ctx.changed
        groups: dict[tuple[str, str], list[int]] = {}
        for index in survivors:
            mutant = trials[index].mutant
            text = changed.texts.get(mutant.path) if changed is not None else None
            function = self.search.target(mutant.path, text, mutant.line) if text is not None else None
            if function is not None:
                groups.setdefault((mutant.path, function), []).append(index)
        return list(groups.items())

    async def _record(
        self, workspace: Workspace, number: int, path: str, function: str, trials: Sequence[Trial]
    ) -> tuple[str, tuple[Call, ...]] | None:
        """The module's name and the calls the survivors' tests made, over head."""
        profile = self.ctx.plan.profile
        tests = functions(test for trial in trials for test in trial.tests)
        name = f"calls {number + 1}"
        [copy] = await workspace.fork(
            1, self.ctx.export_head, profile.install.environment, network=self.ctx.plan.policy.test_network
        )
        try:
            out = f"calls-{number + 1}.json"
            env = await self.runner.plugin(copy, self.search.recorder(path, function, copy.report_path(out)))
            await self.runner.run(
                copy,
                CheckId.BITES,
                name,
                env,
                reruns.command(profile.suite.command, list(tests)),
                timeout=max(trial.timeout for trial in trials),
            )
            raw = await copy.read_report(out)
        finally:
            await close_all([copy])
        return read_calls(raw)

    async def _search(self, workspace: Workspace, number: int, job: SearchJob) -> dict[str, Found]:
        """The search's answer for each of the job's mutants."""
        profile = self.ctx.plan.profile
        plugin, command = self.search.searcher(job)
        out = f"search-{number + 1}.json"
        [copy] = await workspace.fork(
            1, self.ctx.export_head, profile.install.environment, network=self.ctx.plan.policy.test_network
        )
        try:
            await self.runner.plugin(copy, plugin)
            filled = command.replace("{folder}", self.runner.gate_path(copy)).replace("{out}", copy.report_path(out))
            await self.runner.command(copy, CheckId.BITES, f"search {number + 1}", filled, SEARCH_SECONDS)
            raw = await copy.read_report(out)
        finally:
            await close_all([copy])
        return read_found(raw, frozenset(job.mutants))
