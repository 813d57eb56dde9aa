"""setuptools' own editable install, told apart from a startup hook head wrote.

A custom install the README recommends (`pip install -e .`) goes through
setuptools' PEP 660 editable wheel, which for most layouts leaves a `.pth`
that runs `import __editable___NAME_finder; ...install()` at every start,
and the finder module it imports. The environment check refuses code run at
start from head's own project, so such a project could not be gated at all.
This accepts exactly what setuptools writes: the one `.pth` line, and a
finder that is, but for its three data lines, a template some setuptools
release wrote (FINDER_TEMPLATES, from every release since 64.0.0:
`bench/finder_templates.py` prints them), whose data are plain literals
mapping importable names into the project's tree. Anything else, a byte
more or a path outside the tree, stays refused.

Stdlib only: it runs in the sandbox inside env_check's script (see
`profile.python_environment_check`), nothing of the gate importable there.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
from collections.abc import Callable

PTH_LINE = re.compile(r"^import (__editable___\w+_finder); \1\.install\(\)\n?$")
DATA_LINE = re.compile(r"^(MAPPING|NAMESPACES|PATH_PLACEHOLDER)((?::[^=\n]*)? = )(.*)$", re.M)
NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
# names the interpreter imports at every start on its own: never head's to map
STARTUP_NAMES = frozenset({"sitecustomize", "usercustomize", "__main__"})
PLACEHOLDER = re.compile(r"""^'(__editable__\.[\w.+-]+\.finder)' \+ "\.__path_hook__"$""")
# sha256 of each setuptools finder template (64.0.0 to 84.2.1), its data lines blanked by `blanked`
FINDER_TEMPLATES = frozenset(
    {
        "ef871cf0a7ab3fda0e400848982c68fc029e5465abd85251753d0983677473cb",  # 64.0.0 to 65.1.0
        "cc315426c6a5e31009600233bb72ac450746b36315ed1e7a116d017b906ee87d",  # 65.1.1 to 65.2.0
        "c7386ba4602a8fb77208bb81e16245e47bdb323f02a74059b7d720ba437ca901",  # 65.3.0 to 68.0.0
        "6ea6ea43ae6699302725fb62482298b6b5250f7e20f4e1b4e33ee0c02f3776c2",  # 68.1.0
        "479bb77d4598a20f693c4651b4b540040e13825eaafed28df0dfa7bcc7b93077",  # 68.1.2
        "3478ada5ed6117a7d6c71819a5102eac0a20e79f244febb291b0b7ca9f36e4ac",  # 68.2.0 to 69.5.1
        "eb0ca555b5bd9a5a6fec3f3f17b7e96202a6e2feb9e8f36ebb5a52ae0f9aa1aa",  # 70.0.0 to 70.3.0
        "66d533836ef0e3fea09ae81edcb56e54a243e45fde67705d111ae4fac5988d6c",  # 71.0.0 to 84.2.1
    }
)


def setuptools_editable(site_file: str, pth_text: str, venv: str, read: Callable[[str], str | None]) -> bool:
    """Whether `site_file`, a `.pth` of head's own project holding
    `pth_text`, is setuptools' editable hook: named as setuptools names it,
    its one line imports a finder beside it that `finder_ok` accepts.
    `read(path)` is the check's no-follow text reader."""
    match = PTH_LINE.match(pth_text)
    if match is None or not os.path.basename(site_file).startswith("__editable__."):
        return False
    finder = read(os.path.join(os.path.dirname(site_file), match.group(1) + ".py"))
    return finder is not None and finder_ok(finder, venv)


def finder_ok(text: str, venv: str) -> bool:
    """A finder setuptools wrote, mapping names into the project's tree
    (the folder holding the environment `venv`) and only there."""
    template, data = blanked(text)
    if hashlib.sha256(template.encode()).hexdigest() not in FINDER_TEMPLATES or data is None:
        return False
    mapping, namespaces, placeholder = data
    paths = [*mapping.values(), *(p for ps in namespaces.values() for p in ps)]
    names = [*mapping, *namespaces]
    return (
        all(NAME.match(name) and name.split(".")[0] not in STARTUP_NAMES for name in names)
        and all(inside(path, venv) for path in paths)
        and PLACEHOLDER.match(placeholder) is not None
    )


def blanked(text: str) -> tuple[str, tuple[dict[str, str], dict[str, list[str]], str] | None]:
    """The finder with its three data lines' values blanked, and the values
    read as literals (None when any is missing, doubled or not a literal of
    its kind)."""
    values: dict[str, list[str]] = {}

    def blank(match: re.Match[str]) -> str:
        values.setdefault(match.group(1), []).append(match.group(3))
        return match.group(1) + match.group(2) + "..."

    template = DATA_LINE.sub(blank, text)
    if sorted(values) != ["MAPPING", "NAMESPACES", "PATH_PLACEHOLDER"] or any(len(v) != 1 for v in values.values()):
        return template, None
    try:
        mapping, namespaces = (ast.literal_eval(values["MAPPING"][0]), ast.literal_eval(values["NAMESPACES"][0]))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return template, None
    if not (
        _str_map(mapping)
        and isinstance(namespaces, dict)
        and all(
            isinstance(k, str) and isinstance(v, list) and all(isinstance(p, str) for p in v)
            for k, v in namespaces.items()
        )
    ):
        return template, None
    return template, (mapping, namespaces, values["PATH_PLACEHOLDER"][0])


def _str_map(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def inside(path: str, venv: str) -> bool:
    """An absolute path in the project's tree (the folder holding the
    environment), never in the environment itself nor through `..`."""
    venv = os.path.abspath(venv)
    tree = os.path.dirname(venv)
    if not os.path.isabs(path) or ".." in path.split(os.sep) or path != os.path.normpath(path):
        return False
    in_tree = path.startswith(tree.rstrip(os.sep) + os.sep)
    return in_tree and path != venv and not path.startswith(venv + os.sep)
