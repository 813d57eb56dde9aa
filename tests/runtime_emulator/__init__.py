"""A local emulator of the Runtime HTTP API, for testing through the real SDK.

The unmodified `withruntime` SDK talks to it through RUNTIME_API_URL. It
runs each sandbox's commands for real, in a local directory shown at one
fixed path inside a private mount namespace (so a fork, a copy of that
directory, sees its venv's absolute paths as the original did), and it can
inject the faults the gate must survive: capacity refusals, 503s, 429s with a
retry hint, a stream cut after a command started, a lost stream, a sandbox
that never reaches `running`.
"""

from tests.runtime_emulator.server import Emulator
from tests.runtime_emulator.state import Faults

__all__ = ["Emulator", "Faults"]
