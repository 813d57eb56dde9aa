"""`bites`' control: the kills checked by a run set up as a mutant's,
with head's own code in the mutant's place.

A mutant's run differs from head's own runs in ways a test can see: the
gate's plugin that loads the mutant, the source loader it patches, the
stop at the first failure, the tests picked. A test that notices and fails
there kills every mutant without checking anything. So before `bites`
passes on its kills, the tests that killed run once more exactly as a
mutant's run would run them, the "mutant" being head's own text: a test
that fails there fails without any mutant, and the kills it made are
spurious (void, and a person is asked). The "mutant" is head's code in a
twin's text where the stack makes one (stacks/python/twins.py): a test
that compares the code it is handed with head's text fails there as under
every mutant. Head's tests that fail in their own
first rounds are taken out and the rest run again, at most ROUNDS times; a
control that breaks or runs out of time verifies nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from gatetui.gate.judging.mutants import Outcome, Trial, failing, functions
from gatetui.gate.judging.results import SuiteRun
from gatetui.stacks.mutation import Mutant, Twin

ROUNDS = 3
RunTrial = Callable[[str, Trial], Awaitable[tuple[Outcome, SuiteRun]]]


async def verified(
    trials: Sequence[Trial],
    tried: Sequence[tuple[Outcome, SuiteRun]],
    texts: Mapping[str, str],
    run_trial: RunTrial,
    twin: Twin | None = None,
) -> list[Outcome]:
    """The outcomes, each kill made only by tests that fail without the
    mutant made SPURIOUS: one control per file whose mutants were killed,
    over the tests that killed them, its "mutant" the file's twin where the
    stack makes one (`twin`), else head's own text."""
    outcomes = [found for found, _ in tried]
    killed = {i: failing(run) or trials[i].tests for i, (found, run) in enumerate(tried) if found is Outcome.KILLED}
    for path in sorted({trials[i].mutant.path for i in killed}):
        mine = {i: by for i, by in killed.items() if trials[i].mutant.path == path}
        whole = any(not tests for tests in mine.values())  # a whole-suite kill with no named test
        tests = () if whole else functions(t for ts in mine.values() for t in ts)
        head = stand_in([trials[i].mutant for i in mine], texts[path], twin)
        fail_anyway, all_void = await _control(head, tests, max(trials[i].timeout for i in mine), run_trial)
        for i, by in mine.items():
            if all_void or set(by) <= fail_anyway:
                outcomes[i] = Outcome.SPURIOUS
    return outcomes


def stand_in(killed: Sequence[Mutant], text: str, twin: Twin | None) -> Mutant:
    """What the control runs in the mutants' place: head's code, read as
    differently from head's text as a mutant reads, on the mutants' lines."""
    first = killed[0]
    made = twin(text, frozenset(m.line for m in killed)) if twin is not None else None
    return Mutant(first.path, first.line, "control", first.before, first.before, made or text.encode())


async def _control(
    head: Mutant, tests: tuple[str, ...], limit: float, run_trial: RunTrial
) -> tuple[frozenset[str], bool]:
    """The tests that fail in a mutant's run of head's own code, and
    whether the control could not say (it broke, or ran out of rounds)."""
    fail_anyway: set[str] = set()
    for round_ in range(ROUNDS):
        found, run = await run_trial(f"control {round_ + 1}", Trial(head, tests, limit))
        if found is Outcome.SURVIVED:
            return frozenset(fail_anyway), False
        failed = set(failing(run))
        if found is not Outcome.KILLED or not failed or not tests:
            return frozenset(fail_anyway | failed), True
        fail_anyway |= failed
        tests = tuple(t for t in tests if t not in fail_anyway)
        if not tests:
            return frozenset(fail_anyway), False
    return frozenset(fail_anyway), True
