"""Slugs: the words of a title, lowercase, joined by hyphens."""

import time


def slugify(title: str) -> str:
    return "-".join(title.lower().split())


def stamped(title: str) -> str:
    """A slug made unique by the second it was made in."""
    return f"{slugify(title)}-{int(time.time())}"
