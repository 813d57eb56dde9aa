"""What a backend can do is declared, and the gate reads the declaration:
whether its figures are measured, what it enforces, what its account says."""

from __future__ import annotations

import asyncio
from pathlib import Path

from gatetui.backends.local import LocalBackend
from gatetui.backends.runtime import RuntimeBackend
from gatetui.gate.runner import account_of, isolation_of
from tests.support.supervising import FakeBackend


class Declared(FakeBackend):
    """A fake backend whose account answers as it is told."""

    def __init__(self, credit: dict[str, float] | None = None, fails: bool = False):
        super().__init__()
        self.credit, self.fails = credit, fails

    async def account(self) -> dict[str, float] | None:  # type: ignore[override]  # the fake's own answer
        if self.fails:
            raise ConnectionError("the account service is down")
        return self.credit


def test_the_local_backend_declares_estimates_no_account_and_what_it_enforces(tmp_path: Path) -> None:
    backend = LocalBackend(work_root=tmp_path, fork_mode="bind", isolate=False)
    assert backend.measured is False
    assert asyncio.run(backend.account()) is None
    assert asyncio.run(account_of(backend)) == {}
    assert isolation_of(backend) == backend.isolation.to_json()
    assert isolation_of(backend)["enforced"] is False
    assert isolation_of(backend)["reason"] == "turned off by the caller"


def test_the_runtime_backend_declares_measured_figures_and_nothing_of_this_machine() -> None:
    assert (RuntimeBackend.measured, RuntimeBackend.isolation) == (True, None)
    assert isolation_of(RuntimeBackend()) == {}


def test_the_account_is_read_as_declared_and_never_fails_the_gate() -> None:
    assert asyncio.run(account_of(Declared({"available": 12.5, "spent": 0.25}))) == {"available": 12.5, "spent": 0.25}
    assert asyncio.run(account_of(Declared(None))) == {}
    assert asyncio.run(account_of(Declared(fails=True))) == {}


def test_the_fakes_declare_what_the_gate_reads() -> None:
    fake = FakeBackend()
    assert (fake.measured, fake.isolation, asyncio.run(fake.account())) == (False, None, None)
    assert isolation_of(fake) == {}
