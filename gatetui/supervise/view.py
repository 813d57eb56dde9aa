"""What a screen reads of a supervisor: the supervisor itself, or a viewer's
copy of it (`remote.RemoteSupervisor`) fed by the watch stream.

The main screen draws from this alone, so the supervisor's own screen and
every viewer show the same rows from the same records; what changes
anything (rerun, cancel, review, submits given back) needs the supervisor
itself, which a viewer does not have. No Textual here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from gatetui.gate.cost import Usage
from gatetui.supervise.events import Listener
from gatetui.supervise.runs import Branch, Run


class Named(Protocol):
    """The backend as a screen names it."""

    @property
    def name(self) -> str: ...


class SupervisorView(Protocol):
    @property
    def repo(self) -> Path: ...

    @property
    def base(self) -> str: ...

    @property
    def pattern(self) -> str: ...

    @property
    def backend(self) -> Named: ...

    @property
    def branches(self) -> dict[str, Branch]: ...

    @property
    def submit_cap(self) -> int: ...

    def subscribe(self, listener: Listener) -> Callable[[], None]: ...

    def run(self, name: str, run_id: str | None = None) -> Run | None: ...

    def load_logs(self, run: Run) -> None: ...

    def submits_used(self, name: str) -> int: ...

    def cost_since_start(self) -> Usage: ...
