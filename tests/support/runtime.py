"""The runtime backend's settings for gates against the emulator: short waits,
so a fault shows in seconds."""

from __future__ import annotations

from gatetui.backends.runtime import RuntimeSettings

FAST = RuntimeSettings(capacity_wait=5, start_seconds=1, command_grace=5)
