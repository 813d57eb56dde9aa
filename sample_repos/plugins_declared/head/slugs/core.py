"""Slugs: the words of a title, lowercase, joined by hyphens."""

import re
import time

WORD = re.compile(r"[a-z0-9]+")


def slugify(title: str) -> str:
    """Only letters and digits make words: punctuation goes."""
    return "-".join(WORD.findall(title.lower()))


def stamped(title: str) -> str:
    """A slug made unique by the second it was made in."""
    return f"{slugify(title)}-{int(time.time())}"
