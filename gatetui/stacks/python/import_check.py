"""The import check, run by the venv's interpreter in a copy: head's packages
import with only their runtime dependencies present.

Arguments: the modules to import. Standard library only. The runtime
closure is read from the installed metadata (importlib.metadata): head's own
projects (installed from their folder: PEP 610 `dir_info`) and their
`Requires-Dist` without extras,
followed through each dependency's own; a requirement behind an `extra`
marker is the tests' (or another option's), any other marker is kept (the
closure errs wide: a module is hidden only when it is surely not a runtime
dependency). Modules that only distributions outside the closure provide
are hidden while head's packages import, so a library module importing
something only the test extras brought fails here, named, as it would on a
user's machine.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.metadata as metadata
import re
import sys
import types
from collections.abc import Sequence

NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_closure(project: str) -> set[str]:
    seen: set[str] = set()
    todo = [project]
    while todo:
        name = canonical(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            requirement, _, marker = line.partition(";")
            found = NAME.match(requirement)
            if found and "extra" not in marker:
                todo.append(found.group(1))
    return seen


class Hidden(importlib.abc.MetaPathFinder):
    """Refuses the top-level modules only test-time distributions provide."""

    def __init__(self, hidden: dict[str, list[str]]):
        self.hidden = hidden

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None
    ) -> None:
        top = fullname.partition(".")[0]
        if top in self.hidden:
            raise ModuleNotFoundError(
                f"No module named {top!r} at run time: only {', '.join(self.hidden[top])} provides it, and "
                f"it is installed for the tests alone (declare it in the project's runtime dependencies)",
                name=top,
            )
        return None


def own_projects() -> list[str]:
    return [
        d.metadata["Name"]
        for d in metadata.distributions()
        if '"dir_info"' in (d.read_text("direct_url.json") or "") and d.metadata["Name"]
    ]


def main(modules: list[str]) -> None:
    own = own_projects()
    if own:  # else (a custom install) nothing is known to hide
        hide(set().union(*(runtime_closure(name) for name in own)))
    for module in modules:
        importlib.import_module(module)


def hide(allowed: set[str]) -> None:
    provided = metadata.packages_distributions()
    hidden = {
        top: sorted(set(dists))
        for top, dists in provided.items()
        if top not in sys.stdlib_module_names and not {canonical(d) for d in dists} & allowed
    }
    sys.meta_path.insert(0, Hidden(hidden))


if __name__ == "__main__":
    main(sys.argv[1:])
