"""A gauge's scale: readings outside it are shown at its ends."""


def clamp(value: int, low: int, high: int) -> int:
    """Return `value` kept within low..high (low <= high)."""
    if value < low:
        return low
    return value


def percent(value: int, low: int, high: int) -> int:
    """Where `value` sits on the scale, 0 to 100."""
    return (clamp(value, low, high) - low) * 100 // (high - low)
