"""The gate's own Python scripts, as the one source `python3 -I -S -c` runs.

The environment check runs in the sandbox with the machine's interpreter
in isolated mode, where nothing of the gate can be imported; a script that
is more than one module is sent as one text: the modules in order, their
imports of each other dropped, one `__future__` import on top. No library
does this for a `-c` script (a zipapp needs a file the sandbox would read
from head's reach).
"""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).parent
FUTURE = re.compile(r"^from __future__ import annotations\n", re.M)
OWN_IMPORT = re.compile(r"^from gatetui\.[\w.]+ import [^\n]*\n", re.M)


def bundle(*names: str) -> str:
    """The modules of this folder named, as one script: the last one's
    `__main__` block runs after every module before it is defined."""
    texts = [OWN_IMPORT.sub("", FUTURE.sub("", (HERE / name).read_text())) for name in names]
    return "from __future__ import annotations\n" + "\n".join(texts)


ENV_CHECK = bundle(
    "dist_names.py", "editable_check.py", "plugin_entries.py", "env_check.py"
)  # env_check.py's main, with what it imports
