"""Lengths in the units people still use."""

from unitlib._version import __version__, __version_tuple__

__all__ = ["__version__", "__version_tuple__", "inches_to_cm", "yards_to_inches"]


def inches_to_cm(inches: float) -> float:
    """An inch is exactly 2.54 cm."""
    return inches * 2.54


def yards_to_inches(yards: float) -> float:
    """A yard is three feet of twelve inches."""
    return 3 * 3 * yards
