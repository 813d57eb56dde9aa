"""Ways to bend a pytest verdict from outside the test files.

Pytest runs in the same process as the code it tests, so a change that
never touches a test can still decide what the report says: a pytest plugin
the project itself starts to register (a `pytest11` entry point loads in
every run, base's tests included), an interpreter startup hook
(`sitecustomize.py`, `usercustomize.py`, a `.pth` file), or a skip raised
from library code (base's tests would be skipped too, so no comparison of
runs can see it). These are read from the diff, before anything runs.

Library code can also rewrite the verdict from inside: patch pytest's
reports or hooks when the tests import it, exit the process early, swap
unittest's result class. The old tests run on the new code by design, so
nothing they report can contradict it; what can be seen is the diff adding
code that reaches into the test runner, or that asks whether a runner (or
the gate's sandbox) is there, to be right only then. That is asked of a person (`old_tests`
fails, the verdict is `review`), not failed outright: a project may have a
reason, and a project that is itself a pytest plugin (a pytest11 entry point
at base) is not scanned for it at all.

A forgery need not name the runner: the same is read in the means any of
them needs. Code built at run time (`exec`, `eval`, `__import__`), a hand on
how the process ends or on the interpreter itself (`atexit`, signals,
`getattr(os, ...)`, `gc.get_objects`), the runner's report named, the whole
environment read (a runner's variables found by prefix), the caller's frame
asked who it is, the home folder read (a new user's in a sandbox, full on
a person's machine): each is shown to a person with its line. A test file
is read for what only a forged report needs: JUnit-shaped text, and an end
of the process with nothing failed (`os._exit`, `sys.exit(0)`). Package
metadata in the tree (`*.dist-info`, `*.egg-info`, in any letter case, or a
link at such a name) is on `sys.path` in every run; the runs load no plugin
it declares (plugins_loaded.py names the verified distributions' only), and
this is the second line: its entry points are a finding, and base's tests
run without them. Test code that reads the library's source or bytecode
instead of running it (source_reads.py) is shown to a person the same way.
"""

from __future__ import annotations

import configparser
import posixpath
import re
import tomllib
from collections.abc import Callable
from pathlib import PurePosixPath

from gatetui.git.snapshot import Snapshot
from gatetui.stacks.base import Finding, HookScan
from gatetui.stacks.codeview import python_view
from gatetui.stacks.lines import added, first_match, without_comment
from gatetui.stacks.python.plugin_entries import entry_point_names
from gatetui.stacks.python.same_code import restated
from gatetui.stacks.python.source_reads import source_reads

STARTUP_NAMES = ("sitecustomize.py", "usercustomize.py")
SKIP_CALL = re.compile(
    r"\b(?:raise\s+(?:unittest\.)?SkipTest\b|(?:pytest|_pytest\.outcomes)\.(?:skip|xfail|importorskip)\s*\("
    r"|\bskipTest\s*\(|raise\s+(?:pytest\.)?skip\.Exception\b)"
)
RUNNER_REACH = re.compile(
    r"(?:\bimport\s+_pytest\b|\bfrom\s+_pytest\b|\b_pytest\.\w|\bdef\s+pytest_\w+|\bpluginmanager\b"
    r"|^\s*(?:import|from)\s+(?:pytest|unittest\.mock)\b|\bfrom\s+unittest\s+import\s+mock\b"
    r"|\bsys\.modules\s*\[\s*['\"]_?pytest|\bos\._exit\s*\(|\bsys\.excepthook\s*=(?!=)"
    r"|\b(?:TestCase|TestResult|TextTestResult|TextTestRunner)\.\w+\s*=(?!=))"
)
# Code that asks whether it runs under a test runner can be right only there:
# every run, base's tests included, takes the path the tests see.
RUNNER_ENV = re.compile(r"\bPYTEST_(?:CURRENT_TEST|VERSION|XDIST_WORKER|XDIST_TESTRUNUID|ADDOPTS)\b")
RUNNER_PROBE = re.compile(  # with a runner's word on the same line: a look at the running process
    r"\bsys\.(?:modules|argv|orig_argv|_getframe)\b|\bfind_spec\b|\bfind_loader\b|\bimport_module\b"
    r"|\binspect\.stack\b|\bextract_stack\b|\bos\.environ\b|\bgetenv\b|\b__main__\b"
)
# "pytest", "unittest", "test" as a word of its own or a name's part, never "latest" or "contest"
RUNNER_WORD = re.compile(r"(?<![A-Za-z])(?:py|unit)?[tT]est")
TEST_COMPARED = re.compile(r"[=!]=\s*[\"'][tT]est(?:ing)?[\"']|[\"'][tT]est(?:ing)?[\"']\s*[=!]=")
# The means a forgery needs when it names no runner: code built at run time, a hand on the
# interpreter or on how the process ends, the runner's report, the whole environment, the caller.
DYNAMIC_CODE = re.compile(
    r"(?<![\w.])(?:exec|eval|compile|__import__)\b(?!\s*=[^=])|\bmarshal\.loads?\b|\brunpy\b"
    r"|\btypes\.(?:CodeType|FunctionType)\b|\bimport_module\s*\((?!\s*[\"'][\w.]+[\"']\s*[,)])"
)
INTERPRETER_REACH = re.compile(
    r"\batexit\b|\bfaulthandler\b|\bsignal\.(?:signal|raise_signal|alarm|setitimer|pthread_kill)\s*\("
    r"|\bos\.(?:kill|killpg|abort|register_at_fork)\s*\("
    r"|\bsys\.(?:settrace|setprofile|addaudithook|unraisablehook|meta_path|path_hooks)\b"
    r"|\bthreading\.(?:excepthook|settrace|setprofile)\b|\bgc\.get_(?:objects|referrers|referents)\b"
    r"|\bgetattr\s*\(\s*(?:os|sys|builtins|atexit|signal|gc|importlib|inspect|threading)\s*,"
    r"|\b(?:os|sys|builtins)\.__dict__\b|\bvars\s*\(\s*(?:os|sys|builtins)\s*\)"
    r"|\b__builtins__\b|\bimport\s+builtins\b|\bctypes\.(?:pythonapi|py_object|memmove|memset|cast)\b"
)
RUNNER_REPORT = re.compile(r"junit", re.I)
WHOLE_ENVIRONMENT = re.compile(
    r"\bfor\s+[\w\s,()]+\bin\s+os\.environ\b|\bos\.environ\.(?:items|keys|values|_data)\b|\bos\.environb\b"
    r"|\b(?:list|sorted|set|tuple|str|repr|iter|filter|map|any|all)\s*\(\s*os\.environ\b"
)
CALLER = re.compile(
    r"\bsys\._(?:getframe|getframemodulename|current_frames)\b|\btb_frame\b|\bf_back\b"
    r"|\binspect\.(?:stack|currentframe|getouterframes|getinnerframes|trace)\b"
    r"|\btraceback\.(?:extract_stack|walk_stack|format_stack|print_stack|StackSummary)\b"
)
# The home folder: a new user's in the gate's runs, full on a person's machine.
HOME_READ = re.compile(
    r"\b(?:Path|PosixPath|WindowsPath)\.home\s*\(|\bexpanduser\b|\bpw_dir\b|\$\{?HOME\b"
    r"|\b(?:environ|environb)\s*\[\s*b?[\"'](?:HOME|USERPROFILE)[\"']|\b(?:environ|environb)\.get\s*\(\s*b?[\"'](?:HOME|USERPROFILE)[\"']"
    r"|\bgetenvb?\s*\(\s*b?[\"'](?:HOME|USERPROFILE)[\"']|\buser_(?:config|cache|data|state|log|runtime)_(?:dir|path)\b"
)
# In a test file, what only a forged report needs: JUnit-shaped text (read in the line),
# an end of the process with nothing failed (read in the code, strings blanked: a
# subprocess's `-c "import sys; sys.exit(3)"` is no exit of the run's own).
TEST_REPORT_TEXT = re.compile(r"<\s*test(?:case|suites?)\b")
TEST_PROCESS_END = re.compile(
    r"\bos\._exit\b|\bos\.abort\s*\(|\bos\.kill\s*\(\s*os\.getpid\s*\(\s*\)"
    r"|\b(?:sys\.exit|SystemExit)\s*\(\s*(?:0|None|True|False)?\s*\)|\braise\s+SystemExit\s*$"
)
# importlib.metadata takes any folder on sys.path whose name, lowered, ends
# in .dist-info or .egg-info (`Zz.DIST-INFO`), and follows a symlink there:
# both spellings are read, and a file or link standing at such a name.
METADATA = re.compile(r"(?:^|/)[^/]+\.(?:dist|egg)-info/entry_points\.txt$", re.I)
METADATA_LINK = re.compile(r"(?:^|/)[^/]+\.(?:dist|egg)-info$", re.I)
# The gate's names, what it sets in every run that a person's own run does
# not have (a bytecode cache prefix, safe_path, its sitecustomize and the
# `.site-` folder on sys.path), and a uid compared with a number past the
# usual ranges.
SANDBOX_NAME = re.compile(
    r"/tmp/gatetui\b|\bGATETUI_\w+|\bgatetui-runs\b|\bpycache_prefix\b|\bsafe_path\b|\bPYTHONSAFEPATH\b"
    r"|\bPYTHONPYCACHEPREFIX\b|\bsitecustomize\b|['\"/]\.site-"
    r"|\bgete?uid\s*\(\s*\)\s*(?:[<>]=?|[=!]=)\s*\d{5,}|\d{5,}\s*(?:[<>]=?|[=!]=)\s*(?:os\.)?gete?uid\b"
)
SETUP_PY_PLUGIN = re.compile(r"""['"]pytest11['"]\s*:\s*\[([^\]]*)\]""", re.S)
ENTRY = re.compile(r"""['"]?\s*([\w.-]+)\s*=\s*[\w.:]+""")


def scan_hooks(base: Snapshot, head: Snapshot, is_test_file: Callable[[str], bool]) -> HookScan:
    changed = [p for p in head.paths if p not in base or base.ident(p) != head.ident(p)]
    plugins = sorted(set(pytest_plugins(head)) - set(pytest_plugins(base)))
    findings = [
        Finding(_plugin_source(head, name), f"head registers pytest plugin `{name}` (pytest11 entry point)")
        for name in plugins
    ]
    findings += [Finding(p, "interpreter startup hook added or changed") for p in changed if _is_startup(p)]
    library = [p for p in changed if p.endswith(".py") and not is_test_file(p) and not _is_startup(p)]
    added = {p: _added_code(base.text(p) or "", head.text(p) or "") for p in library}
    skips = [
        Finding(f"{p}:{n}", f"skip raised from library code: {line.strip()[:80]}")
        for p, lines in added.items()
        for n, code, line in lines
        if SKIP_CALL.search(code)
    ]
    reaches = (
        []
        if pytest_plugins(base)
        else [
            Finding(f"{p}:{n}", f"{what}: {line.strip()[:80]}")
            for p, lines in added.items()
            for n, code, line in lines
            if not SKIP_CALL.search(code) and (what := _runner_concern(code))
        ]
    )
    reaches += [] if pytest_plugins(base) else _forged_in_tests(base, head, [p for p in changed if is_test_file(p)])
    reaches += source_reads(base, head, changed, is_test_file)  # tests that pin the code, not what it does
    # base's tests run without any pytest plugin head's package added
    blocked = {"PYTEST_ADDOPTS": " ".join(f"-p no:{name}" for name in plugins)} if plugins else {}
    return HookScan(tuple(plugins), tuple(findings), tuple(skips), tuple(reaches), blocked)


# The means a forgery needs when it names no runner, in the order they are said.
MEANS = (
    (DYNAMIC_CODE, "library code runs code it builds at run time"),
    (INTERPRETER_REACH, "library code reaches into the interpreter or how the process ends"),
    (RUNNER_REPORT, "library code names the test runner's report"),
    (WHOLE_ENVIRONMENT, "library code reads the whole environment"),
    (CALLER, "library code looks at who calls it"),
    (HOME_READ, "library code reads the home folder"),
)


def _runner_concern(code: str) -> str | None:
    """What an added library line does with the test runner or the gate's
    sandbox, or with the means a forgery needs, that a person should look
    at; None for the rest."""
    if RUNNER_REACH.search(code):
        return "library code reaches into the test runner"
    if (
        RUNNER_ENV.search(code)
        or (RUNNER_WORD.search(code) and RUNNER_PROBE.search(code))
        or TEST_COMPARED.search(code)
    ):
        return "library code checks whether a test runner is loaded"
    if SANDBOX_NAME.search(code):
        return "library code looks for the gate's sandbox"
    return first_match(code, MEANS)


def _forged_in_tests(base: Snapshot, head: Snapshot, tests: list[str]) -> list[Finding]:
    """Added lines of test files that print JUnit-shaped text or end the
    process with nothing failed: the two halves of a report a test forges
    for the tests the change broke."""
    found = []
    for path in (p for p in tests if p.endswith(".py")):
        text = head.text(path) or ""
        code = python_view(text).code.split("\n")
        for n, line in added(base.text(path) or "", text):
            what = (
                "test code writes what reads as the runner's report"
                if TEST_REPORT_TEXT.search(line)
                else "test code ends the process"
                if n <= len(code) and TEST_PROCESS_END.search(code[n - 1])
                else None
            )
            if what:
                found.append(Finding(f"{path}:{n}", f"{what}: {line.strip()[:80]}"))
    return found


def pytest_plugins(snap: Snapshot) -> list[str]:
    """Names of the pytest11 entry points the project's own metadata declares."""
    names: list[str] = []
    names += _from_pyproject(snap.text("pyproject.toml"))
    names += _from_setup_cfg(snap.text("setup.cfg"))
    for match in SETUP_PY_PLUGIN.finditer(snap.text("setup.py") or ""):
        names += ENTRY.findall(match.group(1))
    for _, text in metadata_entry_points(snap):  # a dist-info or egg-info in the tree
        names += _entry_points(text, "pytest11")
    return sorted(set(names))


def metadata_entry_points(snap: Snapshot) -> list[tuple[str, str | None]]:
    """Each entry_points.txt of package metadata in the tree, as the path
    that puts it there (the file, or a link at a metadata folder's name)
    and its text (None where a link leads out of the tree)."""
    found: list[tuple[str, str | None]] = [(p, snap.text(p)) for p in snap.paths if METADATA.search(p)]
    for link in (p for p in snap.paths if METADATA_LINK.search(p)):
        target = posixpath.normpath(posixpath.join(posixpath.dirname(link), (snap.text(link) or "").strip()))
        inside = [p for p in snap.under(target) if p.lower() == f"{target}/entry_points.txt".lower()]
        found += [(link, snap.text(p)) for p in inside] or [(link, None)]
    return found


def _from_pyproject(text: str | None) -> list[str]:
    if not text:
        return []
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    project = data.get("project", {})
    groups = project.get("entry-points", {}) if isinstance(project, dict) else {}
    plugins = groups.get("pytest11", {}) if isinstance(groups, dict) else {}
    poetry = data.get("tool", {}).get("poetry", {}).get("plugins", {}).get("pytest11", {})
    return [str(k) for k in (*plugins, *poetry)] if isinstance(plugins, dict) else []


def _from_setup_cfg(text: str | None) -> list[str]:
    if not text:
        return []
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    raw = parser.get("options.entry_points", "pytest11", fallback="")
    return [m.group(1) for line in raw.splitlines() if (m := ENTRY.match(line.strip()))]


def _entry_points(text: str | None, group: str) -> list[str]:
    """Names in one group of an entry_points.txt (read as importlib.metadata reads it)."""
    return entry_point_names(text or "", group)


def _plugin_source(snap: Snapshot, name: str) -> str:
    for path in ("pyproject.toml", "setup.cfg", "setup.py"):
        if name in (snap.text(path) or ""):
            return path
    return next((path for path, text in metadata_entry_points(snap) if name in (text or "")), "package metadata")


def _is_startup(path: str) -> bool:
    """Loaded before any test: an interpreter startup hook, or entry points
    that package metadata on sys.path gives the runner."""
    name = PurePosixPath(path).name
    return name in STARTUP_NAMES or name.endswith(".pth") or bool(METADATA.search(path) or METADATA_LINK.search(path))


def _added_code(before: str, after: str) -> list[tuple[int, str, str]]:
    """Head's added lines: line number, the code (comment cut off), the
    line; a line of a statement base already had where it stands, only
    reformatted, is not added (same_code.py)."""
    is_old = restated(before, after)
    return [(n, without_comment(line, "#"), line) for n, line in added(before, after) if not is_old(n)]
