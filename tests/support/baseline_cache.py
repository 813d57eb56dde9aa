"""A baseline cache held in a dict: what the gate's BaselineCache protocol
asks, without a state directory (the supervisor's is the store's)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class MemoryCache:
    def __init__(self) -> None:
        self.records: dict[str, dict[str, Any]] = {}

    def get(self, key: str) -> Mapping[str, Any] | None:
        return self.records.get(key)

    def put(self, key: str, record: Mapping[str, Any]) -> None:
        self.records[key] = dict(record)
