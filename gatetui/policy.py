"""What base's configuration decides about judging a change, apart from what
the stack can do.

A stack's `Profile` says how a project installs, runs and reports (and which
files hold its tests); the `Policy` says how strictly the gate judges it: the
time limit, what a failure of base's tests over head means, the hidden tests,
the random-order run, base's own failures, the network, the mutant cap and
the sealing rules. Both are read from base once, side by side, and the gate
reads each from its own record: a new setting is one field here and one line
in `read_policy`.
"""

from __future__ import annotations

from dataclasses import dataclass

from gatetui.config import DEFAULT_MUTANT_CAP, DEFAULT_RULE, DEFAULT_TIMEOUT, SealRule, Settings


@dataclass(frozen=True)
class Policy:
    timeout: float = DEFAULT_TIMEOUT  # per command, seconds
    on_old_tests_fail: str = "review"  # or "fail"
    import_check: bool = True  # head's packages imported after the install, where the stack can
    hidden: str | None = None  # the hidden tests' folder under the state directory; None: none
    random_order: bool = False  # one of the three runs out of source order, where the runner can
    baseline: bool = False  # `runs` judged against base's own failures
    test_network: bool = False  # the test runs reach the network (default: loopback alone)
    mutant_cap: int = DEFAULT_MUTANT_CAP  # bites: mutants tried at most
    rules: tuple[SealRule, ...] = ()  # the sealing rules, the default one first

    @property
    def sealed(self) -> tuple[str, ...]:
        """The globs old_tests puts back from base: every rule's that is not `allow`."""
        return tuple(dict.fromkeys(g for r in self.rules if r.on_change != "allow" for g in r.globs))


def read_policy(settings: Settings, stack_sealed: tuple[str, ...]) -> Policy:
    """The policy base's settings say. The default sealing rule holds the
    stack's own sealed set (`stack_sealed`: its test files and runner
    settings), or the seal table's `paths`, plus `sealed`; the named rules
    follow it."""
    seal = settings.seal
    default = seal.paths if seal.paths is not None else stack_sealed
    paths = tuple(dict.fromkeys([*default, *settings.sealed]))
    rules = ((SealRule(DEFAULT_RULE, paths, seal.on_change, seal.allow_new),) if paths else ()) + seal.rules
    return Policy(
        timeout=settings.timeout,
        on_old_tests_fail=settings.on_old_tests_fail,
        import_check=settings.import_check,
        hidden=settings.hidden,
        random_order=settings.random_order,
        baseline=settings.baseline,
        test_network=settings.test_network,
        mutant_cap=settings.mutant_cap,
        rules=rules,
    )
