"""Which installer the python profile's default commands use, and how.

uv where it is on this machine (a maintained installer, far faster than pip
at building head's project in an isolated build environment and at
installing a pinned set); pip where the project's own install command is
used, and as the fallback when uv is missing (then, or in a sandbox that
lacks the binary, each command says `else` pip). The resolve is uv's too
(a pylock.toml, lock_report.py, from head's installed metadata packed by
own_stub.py), and pip's (its installation report, pip_report.py) where uv
is missing or cannot start from that metadata (a requirements file that
names the project itself: uv will not take it twice).

Whichever installs, the index configuration is the user's, read where pip
reads it inside the sandbox: the PIP_* variables (the sandbox gets them)
and the machine-wide pip.conf files (the run's HOME is fresh, so no
per-user file), or PIP_CONFIG_FILE. uv is given the same as flags and
reads no configuration of its own (`--no-config`).

Venvs are made by `python3 -m venv --without-pip`, not `uv venv`: uv's
venv adds files no distribution's RECORD accounts for (.gitignore, more
activate scripts), which the environment check would rightly refuse, and
both take a few tens of milliseconds.
"""

from __future__ import annotations

import configparser
import os
import shlex
import shutil
from collections.abc import Mapping

PIP_INTO = "python3 -m pip --python {venv}/bin/python install --disable-pip-version-check --no-input --progress-bar off"
# The pinned step reuses what the resolve downloaded (pip checks every file
# against its pinned hash), never a wheel built in a step head's code ran in
# (pip's wheel cache is not checked), and reads no configuration from the
# home those steps could write (an index of head's choosing).
PINNED_CACHE = 'rm -rf "$HOME/.cache/pip/wheels"; PIP_CACHE_DIR="$HOME/.cache/pip" HOME="$(mktemp -d)" XDG_CONFIG_HOME='
GLOBAL_FILES = ("/etc/xdg/pip/pip.conf", "/etc/pip.conf")
# pip's option -> uv's flag; values are space-separated lists where pip allows several
FLAGS = {
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "trusted-host": "--allow-insecure-host",
}


def find_uv(environ: Mapping[str, str] | None = None) -> str | None:
    """The uv binary: GATETUI_UV when set (a path, or `off` for pip), else
    the one the `uv` package ships, else uv on PATH; None: pip installs."""
    env = os.environ if environ is None else environ
    chosen = env.get("GATETUI_UV", "")
    if chosen:
        return None if chosen == "off" else chosen
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def pip_index_settings(
    environ: Mapping[str, str] | None = None, machine: tuple[str, ...] = GLOBAL_FILES
) -> dict[str, str]:
    """The index options pip would use in the sandbox: the machine's files
    (XDG_CONFIG_DIRS' pip/pip.conf in place of the first), PIP_CONFIG_FILE,
    each file's [global] then [install], and PIP_* variables over them."""
    env = os.environ if environ is None else environ
    found: dict[str, str] = {}
    named = env.get("PIP_CONFIG_FILE", "")
    if named != os.devnull:
        parser = configparser.RawConfigParser()
        dirs = [d for d in env.get("XDG_CONFIG_DIRS", "").split(":") if d]
        files = [os.path.join(d, "pip", "pip.conf") for d in dirs] + list(machine[1:]) if dirs else list(machine)
        try:
            parser.read([*files, *([named] if named else [])])
        except configparser.Error:
            parser = configparser.RawConfigParser()  # pip would refuse it too: the flags say nothing
        for section in ("global", "install"):
            if parser.has_section(section):
                found.update({k: v for k, v in parser.items(section) if k in (*FLAGS, "no-index", "cert")})
    for key in (*FLAGS, "no-index", "cert"):
        value = env.get("PIP_" + key.upper().replace("-", "_"))
        if value is not None:
            found[key] = value
    return found


def uv_flags(settings: Mapping[str, str]) -> tuple[str, str]:
    """uv's flags for pip's index settings (pip's merge of every index, not
    uv's first-index default), and the variable that gives uv pip's `cert`."""
    args = ["--no-config", "--link-mode", "copy", "--index-strategy", "unsafe-best-match"]
    for key, flag in FLAGS.items():
        for value in settings.get(key, "").split():
            args += [flag, value]
    if settings.get("no-index", "").strip().lower() in ("1", "true", "yes", "on"):
        args.append("--no-index")
    cert = settings.get("cert", "").strip()
    prefix = f"SSL_CERT_FILE={shlex.quote(cert)} " if cert else ""
    return prefix, shlex.join(args)


def own_requirements(requirements: list[str], files: list[str]) -> str:
    """The step before a resolve: own_requirements.py ($GATE_OWN_REQS)
    copies the lines after the first (`{own}[...]`) and the requirement
    files into "$reqs", head's own project ({own}) left out of them."""
    return (
        f'reqs="$(mktemp -d)" && python3 -I -S -c "$GATE_OWN_REQS" {{own}} "$reqs" '
        f"{shlex.join([*files, '--', *requirements[1:]])} "
        "&& unset GATE_OWN_REQS"
    )


def stub(source: str) -> str:
    """$stub: head's project's metadata packed by own_stub.py from `source`
    (a venv, or - for the METADATA in $GATE_OWN_METADATA); empty where it
    could not be, and the resolve goes on from the installed project."""
    return (
        '{ stub="$(python3 -I -S -c "$GATE_OWN_STUB" ' + source + ' {own} "$(mktemp -d)")" || stub=""; } && '
        "unset GATE_OWN_STUB GATE_OWN_METADATA"
    )


def copies(files: list[str]) -> list[str]:
    """Where the resolve reads the requirement lines and `files` from
    (own_requirements): shell words."""
    return ['"$reqs/lines.txt"', *(f'"$reqs"/{shlex.quote("tree/" + name)}' for name in files)]


class Installer:
    """The install commands of the python profile's default steps: `uv pip
    install` where uv is found (else pip's), into the venv named."""

    def __init__(self, uv: str | None, pip: str, settings: Mapping[str, str] | None = None):
        self.uv, self.pip = uv, pip
        self.settings = pip_index_settings() if settings is None else dict(settings)

    def install(self, venv: str, args: str, pip_prefix: str = "", fresh_cache: bool = False, uv_args: str = "") -> str:
        """`uv pip install ARGS` into venv when uv runs here, else pip's
        (`pip_prefix` before pip's, e.g. its cache rules; `uv_args`: uv's
        alone). `fresh_cache`: uv reads and writes only a cache made for
        this command (a step no code of head's may have prepared)."""
        pip = f"{pip_prefix}{self.pip.format(venv=venv)} {args}".strip()
        if self.uv is None:
            return pip
        env, flags = uv_flags(self.settings)
        cache = 'UV_CACHE_DIR="$(mktemp -d)" HOME="$(mktemp -d)" XDG_CONFIG_HOME= ' if fresh_cache else ""
        uv = shlex.quote(self.uv)
        command = (
            f"{cache}{env}{uv} pip install --python {venv}/bin/python --no-progress {flags} "
            f"{f'{uv_args} ' if uv_args else ''}{args}"
        )
        return f"if [ -x {uv} ]; then {command}; else {pip}; fi"

    def resolve(self, venv: str, pip: str, requirements: list[str], files: list[str]) -> str:
        """The resolve's command, its report to {report}: uv's lock where uv
        runs, else the report of `pip` (its command but the requirements).
        `requirements`: the lines it resolves, the first `{own}[...]`, given
        as the stub of head's installed metadata (own_stub.py); `files`:
        requirement files; the rest read as own_requirements.py copies them,
        head's own project left out. Where neither resolves from the stub
        (a requirement file that names the tree itself, `-e .`: not twice),
        pip resolves from the installed project. The scripts' variables
        (RESOLVE_ENV) are unset before anything that may build head's code."""
        reads = "".join(f" -r {copy}" for copy in copies(files))
        installed = f"{pip} {shlex.quote(requirements[0])}{reads}"
        fallback = (
            f'if [ -n "$stub" ] && {pip} "{requirements[0]} @ file://$stub"{reads}; then :; else echo '
            f"'gatetui: pip could not resolve from the metadata alone; it resolves from the installed project' "
            f">&2; {installed}; fi"
        )
        first = f"{own_requirements(requirements, files)} && {stub(venv)} && "
        if self.uv is None:
            return first + fallback
        steps = f'[ -n "$stub" ] && {self._uv_compile(f"{venv}/bin/python", requirements, files)}'
        uv = shlex.quote(self.uv)
        return (
            f"{first}if [ -x {uv} ]; then if {steps}; then :; else echo 'gatetui: uv could not resolve from the "
            f"installed project; pip resolves instead' >&2; {fallback}; fi; else {fallback}; fi"
        )

    def resolve_declared(self, requirements: list[str], files: list[str]) -> str:
        """The resolve from the METADATA the tree declares (declared.py, in
        $GATE_OWN_METADATA), for the machine's python3, beside head's build:
        uv's alone (pip resolves from an installed project); without uv it
        fails, and the resolve waits for the build as before."""
        if self.uv is None:
            return "false"
        return (
            f"[ -x {shlex.quote(self.uv)} ] && {own_requirements(requirements, files)} && {stub('-')} && "
            f'[ -n "$stub" ] && {self._uv_compile("python3", requirements, files)}'
        )

    def _uv_compile(self, python: str, requirements: list[str], files: list[str]) -> str:
        """uv's lock to {report}: the first line `{own}[...]` given as the
        stub ($stub), the rest and the requirement files as
        own_requirements.py copied them."""
        env, flags = uv_flags(self.settings)
        return (
            f"printf '%s\\n' \"{requirements[0]} @ file://$stub\" | {env}{shlex.quote(self.uv or '')} pip compile "
            f"--quiet --no-header --python {python} {flags} --format pylock.toml - {' '.join(copies(files))} "
            "> {report}"
        )

    def wheel(self, src: str, out: str, isolated: bool = True) -> str:
        """A wheel of the project at src into out (shell words, quoted here):
        `uv build --wheel`, else `pip wheel`; one command either way (an
        `if` compound), to chain with &&. Not `isolated`: head's backend
        runs with the machine's python3 and what PYTHONPATH shows it (the
        build tools layer), not in an environment made for the build."""
        alone = "" if isolated else "--no-build-isolation "
        pip = (
            f"python3 -m pip wheel --disable-pip-version-check --no-input --progress-bar off --no-deps "
            f'{alone}-w "{out}" "{src}"'
        )
        if self.uv is None:
            return pip
        env, flags = uv_flags(self.settings)
        uv = shlex.quote(self.uv)
        python = "" if isolated else "--no-build-isolation --python python3 "
        return (
            f'if [ -x {uv} ]; then {env}{uv} build --wheel --no-progress {python}{flags} -o "{out}" "{src}"; '
            f"else {pip}; fi"
        )

    def compile_lines(self, report: str) -> str:
        """Requirement lines on stdin pinned for the machine's python3, to
        `report`: uv's lock where uv runs, else pip's installation report."""
        pip = (
            "python3 -m pip install --disable-pip-version-check --no-input --progress-bar off --dry-run "
            f"--ignore-installed --report {report} -r /dev/stdin"
        )
        if self.uv is None:
            return pip
        env, flags = uv_flags(self.settings)
        uv = shlex.quote(self.uv)
        return (
            f"if [ -x {uv} ]; then {env}{uv} pip compile --quiet --no-header --python python3 {flags} "
            f"--format pylock.toml - > {report}; else {pip}; fi"
        )
