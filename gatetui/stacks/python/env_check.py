"""Check a Python environment the install made before any test run uses it.

Head's build code (setup.py, an in-tree backend, a build hook) runs during
the install with write access to the venv, so it can leave a `.pth` file, a
`sitecustomize`, a plugin module or a changed file of a real distribution,
and every test run (base's tests and the hidden tests included) would load
it. Every installer worth trusting writes a RECORD for what it installs
(pip, uv, installer: the wheel spec), so the rule is simple: each file in
the environment belongs to an installed distribution's RECORD, with the
hash it lists; head's own project (installed from a local folder) may add
no startup hook and no script in the runner's name.

No library checks a venv against its RECORDs (pip's `check` reads only
requirements), hence this module. It runs as a script inside the build's
sandbox, after every process of the install is gone, with the machine's
interpreter in isolated mode (`python3 -I -S`, nothing of the venv loaded),
so it is stdlib only. `__pycache__` folders are not checked: the test runs
read bytecode only from a fresh cache of their own (PYTHONPYCACHEPREFIX).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import stat
import sys
from dataclasses import asdict, dataclass

from gatetui.stacks.python.dist_names import installed_twice  # bundled before this module in the sandbox
from gatetui.stacks.python.editable_check import setuptools_editable
from gatetui.stacks.python.plugin_entries import runner_plugins

UV_LOCK = ".lock"  # uv's lock of the venv it installs into: empty, never read by the interpreter
VENV_MADE = ("pyvenv.cfg", "bin/activate", "bin/activate.csh", "bin/activate.fish", "bin/Activate.ps1")
STARTUP_FILES = ("sitecustomize.py", "usercustomize.py")
RUNNER_SCRIPTS = ("pytest", "py.test")
UNACCOUNTED = "files no installed distribution accounts for"
CHANGED = "files changed after their distribution installed them"
HOOKS = "startup hooks from head's own project"
RUNNER = "scripts of head's own project in the runner's name"
LINKS = "links that lead into the environment or to a file the run may write"
UNREADABLE = "files the check could not read"
HOME = "a pyvenv.cfg whose interpreter home the run could write"
FORGED = "distributions no index gave, made while head's code ran"
TWICE = "two distributions of one name, one shadowing the other"
# The gate's own link to the dependency layer (a read-only venv of the
# third-party set, kept between gates): the one file no RECORD lists that
# the check accepts, and only with the exact line the gate writes for the
# layer the run was shown (GATE_LAYER: where). Its line puts the layer's
# site-packages right after the venv's own, whatever order the .pth files
# are read in: before the paths head's editable install adds (the tree's
# root, in a flat layout), exactly where a venv holding the set itself
# would have it. Appended after them, a `pytest.py` at the root of head's
# tree was the runner.
LINK = "zz-gatetui-layer.pth"


@dataclass(frozen=True)
class Problem:
    why: str  # one of the phrases above
    path: str  # relative to site-packages for its files, else to the environment


@dataclass(frozen=True)
class Record:
    dist: str
    own: bool  # installed from a local folder (head's own project), not an index
    digest: str  # "sha256=..." or "" where RECORD lists none


def check(venv: str, own_only: bool = False) -> list[Problem]:
    """Every problem with the environment at `venv`; [] when it may be used.
    `own_only`: after the step where head's own project installed and
    before any third-party one did, every distribution must be local."""
    sites = site_dirs(venv)
    records = read_records(venv, sites)
    problems: list[Problem] = []
    if own_only:
        foreign = sorted({r.dist for r in records.values() if not r.own})
        problems.extend(Problem(FORGED, dist) for dist in foreign)
    for path in walk(venv):
        problems.extend(judge_file(venv, path, records, sites))
    for path, record in sorted(records.items()):
        if record.own:
            problems.extend(judge_own(venv, path, sites))
    layer = layer_site(os.environ.get("GATE_LAYER", ""))  # what a run sees after the venv's own
    view = [(site, os.path.basename(venv)) for site in sites] + ([(layer, "the dependency layer")] if layer else [])
    return problems + [Problem(TWICE, twice) for twice in installed_twice(view)]


def site_dirs(venv: str) -> list[str]:
    lib = os.path.join(venv, "lib")
    found = []
    for name in sorted(os.listdir(lib)) if os.path.isdir(lib) and not os.path.islink(lib) else ():
        site = os.path.join(lib, name, "site-packages")
        if name.startswith("python") and os.path.isdir(site) and not os.path.islink(site):
            found.append(site)
    return found


def read_records(venv: str, sites: list[str]) -> dict[str, Record]:
    """Absolute normalised path -> the record listing it, over every dist-info."""
    listed: dict[str, Record] = {}
    for site in sites:
        for name in sorted(os.listdir(site)):
            info = os.path.join(site, name)
            if not name.endswith(".dist-info") or os.path.islink(info) or not os.path.isdir(info):
                continue
            text = read_text(os.path.join(info, "RECORD"))
            if text is None:
                continue
            own = installed_from_folder(read_text(os.path.join(info, "direct_url.json")))
            for row in csv.reader(io.StringIO(text)):
                if row and row[0]:
                    path = os.path.normpath(os.path.join(site, row[0]))
                    listed[path] = Record(name, own, row[1] if len(row) > 1 else "")
    return listed


def installed_from_folder(direct_url: str | None) -> bool:
    """PEP 610: a distribution installed from a local folder says so; one
    from an index has no direct_url.json at all."""
    if direct_url is None:
        return False
    try:
        data = json.loads(direct_url)
    except ValueError:
        return True  # unreadable: not a distribution to trust
    return not isinstance(data, dict) or "dir_info" in data or str(data.get("url", "")).startswith("file:")


def walk(venv: str) -> list[str]:
    """Every non-folder entry under venv, links not followed, caches skipped."""
    found: list[str] = []
    for folder, dirs, files in os.walk(venv, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not os.path.islink(os.path.join(folder, d)))
        links = [d for d in os.listdir(folder) if os.path.islink(os.path.join(folder, d))]
        found.extend(os.path.join(folder, name) for name in sorted(set(files) | set(links)))
    return found


def judge_file(venv: str, path: str, records: dict[str, Record], sites: list[str]) -> list[Problem]:
    rel = os.path.relpath(path, venv)
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        return [] if venv_link_ok(venv, rel, path) else [Problem(LINKS, shown(venv, path, sites))]
    if rel == "pyvenv.cfg":
        return [] if home_ok(venv, read_text(path)) else [Problem(HOME, rel)]
    if rel in VENV_MADE or is_link(path, sites) or (rel == UV_LOCK and info.st_size == 0):
        return []
    record = records.get(os.path.normpath(path))
    if record is None or not stat.S_ISREG(info.st_mode):
        return [Problem(UNACCOUNTED, shown(venv, path, sites))]
    try:
        same = digest_matches(path, record.digest) if record.digest else True
    except OSError:
        return [Problem(UNREADABLE, shown(venv, path, sites))]
    return [] if same else [Problem(CHANGED, shown(venv, path, sites))]


def layer_site(layer: str) -> str | None:
    """The layer's site-packages (it is a venv of its own), if it has one."""
    found = site_dirs(layer) if layer else []
    return found[0] if len(found) == 1 else None


def link_line(layer: str, venv_site: str) -> str | None:
    """The link's one line: the layer's site dir added (its own .pth files
    read), then what that added moved to just after `venv_site`."""
    site = layer_site(layer)
    if site is None:
        return None
    # site runs the line with exec() in a function: no comprehension or
    # lambda could see its names, hence filter with bound methods
    return (
        f"import itertools, site, sys; _b = set(sys.path); site.addsitedir({site!r}); "
        "_a = list(itertools.filterfalse(_b.__contains__, sys.path)); "
        "sys.path[:] = list(filter(_b.__contains__, sys.path)); "
        f"_i = sys.path.index({venv_site!r}) + 1 if {venv_site!r} in sys.path else len(sys.path); "
        "sys.path[_i:_i] = _a\n"
    )


def is_link(path: str, sites: list[str]) -> bool:
    """The gate's link, exactly as written for the layer shown to this run."""
    if os.path.basename(path) != LINK or os.path.dirname(path) not in sites:
        return False
    expected = link_line(os.environ.get("GATE_LAYER", ""), os.path.abspath(os.path.dirname(path)))
    return expected is not None and read_text(path) == expected


def write_link(venv: str, layer: str) -> str:
    """The link in each site dir of venv: whatever stood at its name goes
    first (never written through); '' when done, else why not."""
    for site in site_dirs(venv):
        line = link_line(layer, os.path.abspath(site))
        if line is None:
            return f"the dependency layer at {layer} holds no single site-packages"
        target = os.path.join(site, LINK)
        if os.path.lexists(target) and not os.path.isdir(target):
            os.unlink(target)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(line)
    return ""


def verify_layer(layer: str) -> list[str]:
    """What is wrong with a built dependency layer: every file against its
    distribution's RECORD, as for any environment the gate hands on."""
    return [f"{problem.why}: {problem.path}" for problem in check(layer)]


def home_ok(venv: str, text: str | None) -> bool:
    """The interpreter starts from pyvenv.cfg's `home`, stdlib and all: it
    must be a folder outside the tree that the run cannot write."""
    homes = [
        line.partition("=")[2].strip() for line in (text or "").splitlines() if line.partition("=")[0].strip() == "home"
    ]
    if len(homes) != 1 or not os.path.isabs(homes[0]):
        return False
    real, tree = os.path.realpath(homes[0]), os.path.realpath(os.path.dirname(os.path.abspath(venv)))
    try:
        info = os.stat(real)
    except OSError:
        return False
    outside = real != tree and not real.startswith(tree + os.sep)
    return outside and stat.S_ISDIR(info.st_mode) and not run_may_write(real, info)


def venv_link_ok(venv: str, rel: str, path: str) -> bool:
    """The links `python -m venv` makes: lib64 -> lib, and bin/python* to an
    interpreter outside the environment that the run cannot write."""
    if rel == "lib64":
        return os.readlink(path) == "lib"
    if not (rel.startswith("bin/python") and "/" not in rel[4:]):
        return False
    real = os.path.realpath(path)
    inside = real == os.path.realpath(venv) or real.startswith(os.path.realpath(venv) + os.sep)
    try:
        target = os.stat(real)
    except OSError:
        return False
    return not inside and stat.S_ISREG(target.st_mode) and not run_may_write(real, target)


def run_may_write(path: str, info: os.stat_result) -> bool:
    """Whether the run (this process's uid) could change it. As root the
    check runs only where runs are not isolated (the sandbox always drops
    root), and nothing is kept from such a run: not asked there."""
    if os.geteuid() == 0:
        return False
    return info.st_uid == os.geteuid() or os.access(path, os.W_OK)


def judge_own(venv: str, path: str, sites: list[str]) -> list[Problem]:
    """What head's own project may not install: code that runs at every
    interpreter start (but setuptools' own editable hook, exactly as it
    writes it: editable_check.py), or a script where the runner's would be."""
    name, folder = os.path.basename(path), os.path.dirname(path)
    if folder in sites and name in STARTUP_FILES:
        return [Problem(HOOKS, shown(venv, path, sites))]
    pth = read_text(path) or "" if folder in sites and name.endswith(".pth") else ""
    if runs_code(pth) and not setuptools_editable(path, pth, venv, read_text):
        return [Problem(HOOKS, shown(venv, path, sites))]
    if folder == os.path.join(venv, "bin") and name in RUNNER_SCRIPTS:
        return [Problem(RUNNER, shown(venv, path, sites))]
    return []


def runs_code(pth: str) -> bool:
    """site.py executes a .pth line that starts with `import`; others are paths."""
    return any(line.startswith(("import ", "import\t")) for line in pth.splitlines())


def digest_matches(path: str, listed: str) -> bool:
    """Whether the file's bytes hash to the digest its RECORD lists,
    compared as bytes: the wheel spec spells it in urlsafe base64, but
    some published wheels write hex (the same bytes), and pip and uv
    install them without a word. An algorithm hashlib lacks, or a value
    in neither spelling, matches nothing."""
    algorithm, _, value = listed.partition("=")
    try:
        hasher = hashlib.new(algorithm)
    except ValueError:
        return False
    expected = digest_bytes(value, hasher.digest_size)
    if expected is None:
        return False
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(block)
    return hasher.digest() == expected


def digest_bytes(value: str, size: int) -> bytes | None:
    """A RECORD digest's bytes, from either spelling; None from neither."""
    if is_hex_digest(value, size):
        return bytes.fromhex(value)
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except ValueError:
        return None
    return raw if len(raw) == size else None


def is_hex_digest(value: str, size: int) -> bool:
    """Hex is twice the digest's size in characters, base64 about 4/3 of
    it: no value is both."""
    return len(value) == 2 * size and all(c in "0123456789abcdefABCDEF" for c in value)


def hex_records(sites: list[str]) -> list[str]:
    """The distributions whose RECORD writes its digests in hex, not the
    wheel spec's urlsafe base64: accepted, and named in the gate's notes."""
    found = set()
    for site in sites:
        for record in read_records(site, [site]).values():
            algorithm, _, value = record.digest.partition("=")
            size = hashlib.new(algorithm).digest_size if algorithm in hashlib.algorithms_available else 0
            if size and is_hex_digest(value, size):
                found.add(record.dist.removesuffix(".dist-info"))
    return sorted(found)


def read_text(path: str) -> str | None:
    """A regular file's text, never through a link, never a fifo's wait
    (backends/local_files.py reads reports the same way; this module runs alone in
    the sandbox, stdlib only, so it cannot share that one)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read(16 << 20).decode("utf-8", "replace")


def shown(venv: str, path: str, sites: list[str]) -> str:
    for site in sites:
        if path.startswith(site + os.sep):
            return os.path.relpath(path, site)
    return os.path.relpath(path, os.path.dirname(venv) or ".")


def describe(problems: list[dict[str, str]], limit: int = 8) -> str:
    """One line for the install check: the problems by kind, paths named."""
    kinds: dict[str, list[str]] = {}
    for problem in problems:
        kinds.setdefault(problem["why"], []).append(problem["path"])
    parts = []
    for why, paths in kinds.items():
        more = f" and {len(paths) - limit} more" if len(paths) > limit else ""
        parts.append(f"the install left {why}: {', '.join(paths[:limit])}{more}")
    return "; ".join(parts)


def own_names(venvs: list[str]) -> list[str]:
    """The names of the distributions the project itself installed."""
    records = (r for venv in venvs for r in read_records(venv, site_dirs(venv)).values() if r.own)
    return sorted({r.dist.removesuffix(".dist-info").rsplit("-", 1)[0] for r in records})


def main(argv: list[str]) -> int:
    """python3 -I -S python_env.py REPORT own|all VENV...: the problems as JSON.
    REPORT link VENV...: the link to the layer at GATE_LAYER written instead."""
    report, mode, venvs = argv[0], argv[1], argv[2:]
    venvs = [venv for venv in venvs if os.path.isfile(os.path.join(venv, "pyvenv.cfg"))]
    if mode == "link":
        failed = [why for venv in venvs if (why := write_link(venv, os.environ.get("GATE_LAYER", "")))]
        print("\n".join(failed) or f"linked the dependency layer at {os.environ.get('GATE_LAYER')}")
        return 1 if failed or not venvs else 0
    problems = [asdict(p) for venv in venvs for p in check(venv, own_only=mode == "own")]
    own = own_names(venvs)
    layer = layer_site(os.environ.get("GATE_LAYER", ""))
    shown_sites = [site for venv in venvs for site in site_dirs(venv)] + ([layer] if layer else [])
    places = [(venv, site_dirs(venv)) for venv in venvs] + ([(layer, [layer])] if layer else [])
    plugins, runner = runner_plugins([(sites, read_records(root, sites)) for root, sites in places], read_text)
    with open(report, "w", encoding="utf-8") as out:
        json.dump(
            {
                "problems": problems,
                "summary": describe(problems),
                "own": own,
                "hex_records": hex_records(shown_sites),
                "plugins": plugins,
                "runner": runner,
            },
            out,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
