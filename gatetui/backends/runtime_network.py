"""Which hosts a Runtime sandbox may reach, read from the user's own setup.

The repository goes into the sandbox as an upload, so the only network an
install needs is the package index. Which index is the user's business: pip's
configuration (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, pip.conf, as `pip config
list` shows them, and pip's own default index when none replaces it) and
npm's (`npm config get registry`, which reads npm_config_registry and
.npmrc), and go's (`go env GOPROXY`, the proxies it fetches modules from,
with the settings beside it passed on as the local backend passes them). No host is written in this code: a gate that hard-coded an index
would let a sandbox reach a host the user never chose.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

PIP_PROBE = (
    "import json, subprocess, sys\n"
    "listing = subprocess.run([sys.executable, '-m', 'pip', 'config', 'list'],"
    " capture_output=True, text=True).stdout\n"
    "try:\n"
    "    from pip._internal.models.index import PyPI\n"
    "    default = [PyPI.url, 'https://' + PyPI.file_storage_domain]\n"
    "except Exception:\n"
    "    default = []\n"
    "print(json.dumps({'listing': listing, 'default': default}))\n"
)
# go's settings on where modules come from and how they are checked: read
# with `go env` (the environment, then go's own env file) and passed on.
GO_SETTINGS = ("GOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GONOPROXY", "GOINSECURE")
CONFIG_LINE = re.compile(r"^(?P<section>[^.]*)\.(?P<key>[a-z-]+)=(?P<value>.*)$")
PROBE_SECONDS = 30


@dataclass(frozen=True)
class IndexAccess:
    """The hosts a sandbox may reach, the variables that point its pip or npm
    at the same index, and what could not be found out."""

    hosts: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def network(self) -> dict[str, object]:
        """The create's `network` field: the index hosts only, or none."""
        return {"internet": True, "allow": list(self.hosts)} if self.hosts else {"internet": False}


def host_of(url: str) -> str | None:
    """The host of an http(s) URL; None for file URLs and local paths."""
    parts = urlsplit(url.strip())
    return parts.hostname if parts.scheme in ("http", "https") and parts.hostname else None


def pip_settings(listing: str) -> dict[str, list[str]]:
    """`pip config list` output as key -> values (later files win, as in pip)."""
    settings: dict[str, list[str]] = {}
    for line in listing.splitlines():
        match = CONFIG_LINE.match(line.strip())
        if match:
            value = match["value"]
            try:
                words = shlex.split(value)
            except ValueError:
                words = [value.strip("'\"")]
            settings[match["key"]] = [w for word in words for w in word.split()]
    return settings


def pip_access(listing: str, default_index: list[str]) -> IndexAccess:
    """The hosts pip would use: its index (the configured one, else pip's own
    default, unless no-index), the extra indexes and find-links pages."""
    settings = pip_settings(listing)
    no_index = settings.get("no-index", ["false"])[-1].lower() in ("1", "true", "yes", "on")
    index = settings.get("index-url", [])
    urls = [] if no_index else (index or default_index)
    urls = [*urls, *settings.get("extra-index-url", []), *settings.get("find-links", [])]
    env: dict[str, str] = {}
    remote = [u for u in index if host_of(u)]
    if remote and not no_index:
        env["PIP_INDEX_URL"] = remote[0]
    extras = [u for u in settings.get("extra-index-url", []) if host_of(u)]
    if extras:
        env["PIP_EXTRA_INDEX_URL"] = " ".join(extras)
    if settings.get("trusted-host"):
        env["PIP_TRUSTED_HOST"] = " ".join(settings["trusted-host"])
    notes = () if urls or no_index else ("pip's default index is unknown here: the sandbox gets no network",)
    return IndexAccess(_hosts(urls), env, notes)


def npm_access(registry: str) -> IndexAccess:
    registry = registry.strip()
    if not host_of(registry):
        return IndexAccess(notes=("npm's registry is unknown here: the sandbox gets no network",))
    return IndexAccess((host_of(registry) or "",), {"npm_config_registry": registry})


def go_access(settings: Mapping[str, str]) -> IndexAccess:
    """The module proxies GOPROXY names (a URL each; `direct`, fetching
    from every module's own host, and `off` name none). The checksum
    database is reached through the proxy when it serves it, as go tries
    first; a go.sum that pins every module needs neither."""
    entries = [e.strip() for e in re.split(r"[,|]", settings.get("GOPROXY", "")) if e.strip()]
    proxies = [e for e in entries if host_of(e)]
    env = {name: settings[name] for name in GO_SETTINGS if settings.get(name)}
    if not proxies:
        return IndexAccess(
            env=env,
            notes=("go's module proxy is unknown here (GOPROXY names none): the sandbox gets no network for go",),
        )
    notes = (
        (
            "GOPROXY's `direct` is not reachable from a Runtime sandbox: modules come from "
            f"{', '.join(_hosts(proxies))} only",
        )
        if "direct" in entries
        else ()
    )
    return IndexAccess(_hosts(proxies), env, notes)


def merge(parts: Iterable[IndexAccess]) -> IndexAccess:
    hosts: list[str] = []
    env: dict[str, str] = {}
    notes: list[str] = []
    for part in parts:
        hosts += part.hosts
        env.update(part.env)
        notes += part.notes
    return IndexAccess(_hosts(hosts), env, tuple(notes))


def _hosts(urls: Iterable[str]) -> tuple[str, ...]:
    found = [h if "://" not in h and "/" not in h else host_of(h) for h in urls]
    return tuple(dict.fromkeys(h for h in found if h))


async def _output(argv: list[str], env: Mapping[str, str] | None) -> str:
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=None if env is None else dict(env),
        )
        out, _ = await asyncio.wait_for(proc.communicate(), PROBE_SECONDS)
    except (OSError, TimeoutError):
        return ""
    return out.decode(errors="replace")


def _json_object(raw: str) -> dict[str, str]:
    try:
        found = json.loads(raw)
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


async def index_access(indexes: frozenset[str], env: Mapping[str, str] | None = None) -> IndexAccess:
    """Ask the user's own pip, npm and go which index they use, for the
    package indexes this gate's stack installs from ("pip", "npm", "go")."""
    parts = []
    if "pip" in indexes:
        raw = await _output(["python3", "-c", PIP_PROBE], env)
        try:
            probe = json.loads(raw)
        except ValueError:
            probe = {"listing": "", "default": []}
        parts.append(pip_access(probe["listing"], list(probe["default"])))
    if "npm" in indexes:
        parts.append(npm_access(await _output(["npm", "config", "get", "registry"], env)))
    if "go" in indexes:
        parts.append(go_access(_json_object(await _output(["go", "env", "-json", *GO_SETTINGS], env))))
    return merge(parts)
