"""gatetui: judge agent-written code on a machine the agent never touched."""

__version__ = "0.1.0"
