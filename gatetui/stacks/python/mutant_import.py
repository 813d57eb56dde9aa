"""How a python mutant reaches its run: from memory, never the tree.

A mutant written over head's file can be told apart by reading the file
(its hash, its size or time, `inspect.getsource`): a test that pins those
"kills" every mutant without checking what the code does. So the file stays
head's, and a small plugin of the gate's (pytest_mutant.py), written into
the run's gate folder under a name drawn per mutant and loaded with `-p`
like the gate's other plugins, has Python's source loader compile the
mutant in that file's place. The mutant's path and text are packed into
the plugin (zlib, base85): no text of head's module stands in the gate
folder for a search of the tree to find.
"""

from __future__ import annotations

import base64
import secrets
import zlib
from pathlib import Path
from types import MappingProxyType

from gatetui.stacks.base import RunPlugin
from gatetui.stacks.mutation import Mutant

PLUGIN = (Path(__file__).parent / "pytest_mutant.py").read_text()


def in_memory(mutant: Mutant) -> RunPlugin:
    """The plugin that loads `mutant` in its file's place, and the
    environment that loads it (the gate folder on PYTHONPATH, as for the
    gate's other plugins)."""
    module = f"site_{secrets.token_hex(6)}"
    source = f"{PLUGIN}\n_install({_pack(mutant.path.encode())!r}, {_pack(mutant.source)!r})\n"
    return RunPlugin(
        MappingProxyType({f"{module}.py": source.encode()}),
        MappingProxyType({"PYTEST_ADDOPTS": f"-p {module}", "PYTHONPATH": "{folder}"}),
    )


def _pack(data: bytes) -> str:
    return base64.b85encode(zlib.compress(data, 6)).decode("ascii")
