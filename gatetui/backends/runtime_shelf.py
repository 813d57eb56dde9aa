"""The dependency layers kept as snapshots on a Runtime account, as `gatetui
cache ls|prune --backend runtime` lists and removes them.

A layer's snapshot is named `gatetui-layer-KEY` (runtime_layers.py); the
SDK lists snapshots by exact name only, so every page of the account's is
read and those names kept. Runtime keeps no last use: a gate that finds a
layer extends its retention from that day, so `used` here is when it was
last extended (or built), and `--older-than` counts from then. A snapshot
is removed whole; a gate that found it and has not yet started a sandbox
from it would say so (the sandbox's create is refused) and install cold
next time.
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from gatetui.backends.layers import LayerInfo
from gatetui.backends.runtime_errors import backend_error, is_sdk_error
from gatetui.backends.runtime_family import sdk
from gatetui.backends.runtime_layers import PREFIX

DAY = 86400.0
T = TypeVar("T")


class SnapshotShelf:
    """The account's layer snapshots; `where` names them in a listing."""

    where = "runtime"

    def __init__(self, client: Callable[[], Any] | None = None):
        self.client = client or (lambda: sdk().AsyncRuntime())

    def listing(self) -> list[LayerInfo]:
        return [info for _, info in asyncio.run(self._kept())]

    def prune(self, older_than_days: float | None) -> tuple[list[str], list[str]]:
        """Snapshots unused for longer than the days given (all when None)
        deleted: (their keys, []): nothing on the account says one is busy."""
        return asyncio.run(self._prune(older_than_days)), []

    async def _kept(self) -> list[tuple[str, LayerInfo]]:
        async def read(client: Any) -> list[tuple[str, LayerInfo]]:
            page = await client.snapshots.list(state="ready")
            return [(str(s["id"]), _info(s)) async for s in page if str(s.get("name") or "").startswith(PREFIX)]

        return await self._with_client(read, "listing the account's layer snapshots")

    async def _prune(self, older_than_days: float | None) -> list[str]:
        kept = await self._kept()
        limit = None if older_than_days is None else _now() - older_than_days * DAY

        async def delete(client: Any) -> list[str]:
            gone = []
            for taken, info in kept:
                if limit is None or info.used < limit:
                    await client.snapshots.delete(taken)
                    gone.append(info.key)
            return gone

        return await self._with_client(delete, "deleting layer snapshots")

    async def _with_client(self, work: Callable[[Any], Awaitable[T]], doing: str) -> T:
        try:
            client = self.client()
        except Exception as err:  # a malformed key is refused on construction
            raise backend_error(err, doing) from None
        try:
            return await work(client)
        except Exception as err:
            if is_sdk_error(err):
                raise backend_error(err, doing) from None
            raise
        finally:
            await client.close()


def _info(snapshot: Mapping[str, Any]) -> LayerInfo:
    """A snapshot as a listing's row: its key, size where Runtime says it,
    when it was built and last kept, its id in place of a digest."""
    built = _moment(snapshot.get("createdAt")) or 0.0
    expires, days = _moment(snapshot.get("expiresAt")), snapshot.get("retentionDays")
    used = expires - days * DAY if expires and isinstance(days, int) and days > 0 else built
    size = snapshot.get("sizeBytes")
    return LayerInfo(
        str(snapshot["name"])[len(PREFIX) :],
        size if isinstance(size, int) else 0,
        built,
        max(built, used),
        (),
        str(snapshot["id"]),
    )


def _moment(text: object) -> float | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def _now() -> float:
    return datetime.datetime.now(datetime.timezone.utc).timestamp()
