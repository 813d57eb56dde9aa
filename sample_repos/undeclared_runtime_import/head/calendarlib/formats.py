"""Which versions of the calendar data format this library reads."""

from packaging.version import Version

NEWEST = Version("2.0")


def reads(version: str) -> bool:
    """True when data written in format `version` can be read here."""
    return Version(version) <= NEWEST
