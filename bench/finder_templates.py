"""Print the digests of setuptools' editable finder templates, for
gatetui/stacks/python/editable_check.py's FINDER_TEMPLATES.

`python bench/finder_templates.py [VERSION...]` downloads each setuptools
release's wheel (every one since 64.0.0, PEP 660's first, when none are
named) with the user's pip configuration, renders its `_FINDER_TEMPLATE` and
blanks its data lines the way the environment check does. It needs the
package index, so no test runs it; run it when a setuptools release changes
its finder, and paste what it prints.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from gatetui.stacks.python.editable_check import blanked

FIRST = (64, 0, 0)


def releases() -> list[str]:
    said = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "setuptools"], capture_output=True, text=True, check=True
    ).stdout
    listed = re.search(r"Available versions: (.*)", said)
    found = [v.strip() for v in (listed.group(1) if listed else "").split(",")]
    return [v for v in found if re.fullmatch(r"\d+(\.\d+)*", v) and tuple(map(int, v.split("."))) >= FIRST]


def template(version: str, folder: Path) -> str | None:
    """The release's finder template, rendered for no packages."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary",
            ":all:",
            f"setuptools=={version}",
            "-d",
            str(folder),
        ],
        check=True,
    )
    (wheel,) = folder.glob(f"setuptools-{version}-*.whl")
    source = zipfile.ZipFile(wheel).read("setuptools/command/editable_wheel.py").decode()
    found = re.search(r'_FINDER_TEMPLATE = """\\?\n(.*?)"""', source, re.S)
    return found.group(1).format(name="N", mapping={}, namespaces={}) if found else None


def main(argv: list[str]) -> int:
    digests: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for version in argv or releases():
            text = template(version, Path(tmp))
            if text is None:
                print(f"setuptools {version}: no finder template", file=sys.stderr)
                continue
            digests.setdefault(hashlib.sha256(blanked(text)[0].encode()).hexdigest(), []).append(version)
    key = lambda v: tuple(map(int, v.split(".")))  # noqa: E731 - a sort key
    for digest, versions in sorted(digests.items(), key=lambda item: min(map(key, item[1]))):
        first, last = min(versions, key=key), max(versions, key=key)
        print(f'    "{digest}",  # {first}' + (f" to {last}" if last != first else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
