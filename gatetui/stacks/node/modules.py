"""npm's packages as a dependency layer, keyed by the lock npm keeps.

A package-lock.json of version 2 or 3 pins every package under node_modules
by the integrity hash of the index's tarball, and `npm ci --ignore-scripts`
lays out exactly those and runs no code of anyone's; the gate's rebuild then
runs the install scripts of the index's packages (see install.py). So
node_modules is made once per lock, in a workspace holding only
package.json, package-lock.json and .npmrc (cut to the keys that say where
packages come from) and nothing else of head's, and shown read-only at
node_modules to the install and every run, in place of an `npm ci` and a
rebuild per gate. Head's own lifecycle scripts then run over a node_modules
they cannot write.

A lock that names anything but the index's packages gets no layer: a folder
of the tree (a `file:` dependency, a workspace), a git dependency, an entry
with no sha512 integrity. That is head's code, or nothing the gate can
verify; the install makes node_modules itself, as before.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from types import MappingProxyType

from gatetui.stacks.base import LockLayer
from gatetui.stacks.node import install

FILES = ("package.json", "package-lock.json", ".npmrc")
# What decides what `npm ci` lays out besides the lock's entries: it checks
# package.json's dependency fields against the lock's root entry.
ROOT_FIELDS = (
    "dependencies",
    "devDependencies",
    "optionalDependencies",
    "peerDependencies",
    "peerDependenciesMeta",
    "bundleDependencies",
    "bundledDependencies",
    "overrides",
    "engines",
    "os",
    "cpu",
)
# The toolchain and platform the packages are laid out and rebuilt for, and
# npm's settings from the environment the sandbox passes on (npm_config_omit
# lays out another node_modules); never a credential's value.
TOOLCHAIN = (
    "sh",
    "-c",
    'node -p "[process.version, process.platform, process.arch, '
    "process.versions.modules].join(' ')\" && npm --version && "
    "{ env | grep -i '^npm_config_' | grep -iv -e auth -e token -e password -e cert -e key "
    "| LC_ALL=C sort; true; }",
)
# The keys of the project's .npmrc, as the install cuts it (install.NPMRC_KEYS),
# that change how npm lays out a lock rather than where it fetches from.
LAYOUT_KEYS = ("legacy-peer-deps", "engine-strict")
AT = "node_modules"
FETCH = f"{install.STEPS[1]} && {install.STEPS[2]} && mkdir {{layer}} && mv {AT} {{layer}}/{AT}"


def layer_key(files: Mapping[str, bytes], toolchain: str) -> str | None:
    """sha256 over every package the lock pins, the dependency fields of
    package.json and of the lock's root, and the toolchain line; None when
    the lock pins anything that is not the index's (or is not a lock)."""
    try:
        manifest = json.loads(files["package.json"])
        lock = json.loads(files["package-lock.json"])
    except (KeyError, ValueError):
        return None
    if not isinstance(manifest, dict) or not isinstance(lock, dict) or "workspaces" in manifest:
        return None
    packages = lock.get("packages")
    if lock.get("lockfileVersion") not in (2, 3) or not isinstance(packages, dict):
        return None
    root = packages.get("", {})
    entries = {path: entry for path, entry in packages.items() if path != ""}
    if not isinstance(root, dict) or not all(_from_index(path, entry) for path, entry in entries.items()):
        return None
    body = {
        "packages": entries,
        "root": {name: root[name] for name in ROOT_FIELDS if name in root},
        "manifest": {name: manifest[name] for name in ROOT_FIELDS if name in manifest},
        "lockfileVersion": lock["lockfileVersion"],
        "npmrc": _layout_settings(files.get(".npmrc", b"")),
        "toolchain": toolchain.strip(),
    }
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _layout_settings(npmrc: bytes) -> dict[str, str]:
    """The .npmrc keys that change what npm lays out, by their last value."""
    found = {}
    for line in npmrc.decode(errors="replace").splitlines():
        key, _, value = line.partition("=")
        if key.strip() in LAYOUT_KEYS:
            found[key.strip()] = value.strip()
    return found


def _from_index(path: str, entry: object) -> bool:
    """An entry npm fetches from the index and checks by its sha512, or one
    packed inside such a package's tarball (which that hash covers)."""
    if not path.startswith("node_modules/") or not isinstance(entry, dict) or entry.get("link"):
        return False
    if entry.get("inBundle") is True:
        return True
    resolved, integrity = entry.get("resolved", ""), entry.get("integrity")
    return (
        isinstance(resolved, str)
        and (not resolved or resolved.startswith(("https://", "http://")))
        and isinstance(integrity, str)
        and integrity.startswith("sha512-")
        and isinstance(entry.get("version"), str)
    )


MODULES = LockLayer(
    files=FILES,
    key=layer_key,
    toolchain=TOOLCHAIN,
    build=(install.STEPS[0], FETCH),
    folder=".layer",
    env=MappingProxyType({}),
    at=AT,
    replaces=install.STEPS[1:],
)
