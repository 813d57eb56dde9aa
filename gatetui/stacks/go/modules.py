"""Go's third-party modules as a dependency layer, keyed by the lock Go keeps.

Every module a Go build uses is pinned in go.sum by its hash, and `go mod
download` fetches what go.mod requires, checking each against go.sum, and
runs no code of anyone's. So the module cache a gate would fill is made
once per (go.mod, go.sum, toolchain), in a workspace holding those two
files and nothing else of head's, and shown read-only to the install and
every run (GOMODCACHE) in place of a download per gate. Head's go.sum
decides what is fetched, as it does in head's own install; it never decides
what a layer kept under another key holds: the key is both files' digests.
A tree with no go.sum (no third-party module) gets no layer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from types import MappingProxyType

from gatetui.stacks.base import LockLayer

FILES = ("go.mod", "go.sum")
# The toolchain and platform the cache is made for (part of the key).
TOOLCHAIN = ("go", "env", "GOVERSION", "GOOS", "GOARCH")
FETCH = (
    'export GOMODCACHE="$PWD/{layer}/mod" GOCACHE="$(mktemp -d)" GOPATH="$(mktemp -d)" '
    "GOFLAGS=-mod=readonly GOTOOLCHAIN=local && go mod download"
)


def layer_key(files: Mapping[str, bytes], toolchain: str) -> str | None:
    """sha256 over both files' digests and the toolchain line; None when
    go.sum pins nothing (there is nothing to fetch)."""
    if not files.get("go.sum", b"").strip() or "go.mod" not in files:
        return None
    body = {name: hashlib.sha256(files[name]).hexdigest() for name in FILES}
    return hashlib.sha256(json.dumps({**body, "toolchain": toolchain.strip()}, sort_keys=True).encode()).hexdigest()


MODULES = LockLayer(
    files=FILES,
    key=layer_key,
    toolchain=TOOLCHAIN,
    build=(FETCH,),
    folder=".layer",
    env=MappingProxyType({"GOMODCACHE": "{layer}/mod"}),
)
