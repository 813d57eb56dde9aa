"""Head's installed project as a wheel holding only its metadata, for uv's resolve.

The resolve starts from the project head's install left in the venv (no
second build of head). pip can start there (an installed distribution
satisfies `name[extras]`); uv's compile cannot, so this script packs the
installed distribution's METADATA into a wheel of its own, with no code at
all, and the resolve asks for `name[extras] @ file://<that wheel>`. uv reads
the Requires-Dist lines from it, extras and markers as pip would; the wheel
is never installed, and the report's entry for it is dropped.

Runs in the sandbox of the step (`python3 -I -S`, stdlib only), reading a
venv head's code wrote: one distribution's METADATA, size-capped, is all it
takes. Prints the wheel's path.

    python3 -I -S own_stub.py VENV NAME OUTDIR
    python3 -I -S own_stub.py - NAME OUTDIR   # METADATA from $GATE_OWN_METADATA
"""

from __future__ import annotations

import base64
import glob
import hashlib
import os
import re
import sys
import zipfile

MAX_METADATA = 1 << 20
WHEEL = b"Wheel-Version: 1.0\nGenerator: gatetui\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def find_metadata(venv: str, name: str) -> tuple[str, str, bytes] | None:
    """(name, version, METADATA) of the installed distribution called
    `name`, from its own METADATA (never from the folder's name)."""
    for info in sorted(glob.glob(os.path.join(glob.escape(venv), "lib", "python*", "site-packages", "*.dist-info"))):
        path = os.path.join(info, "METADATA")
        if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) > MAX_METADATA:
            continue
        with open(path, "rb") as handle:
            named = named_as(handle.read(MAX_METADATA), name)
        if named is not None:
            return named
    return None


def named_as(text: bytes, name: str) -> tuple[str, str, bytes] | None:
    """(name, version, METADATA) when `text` is the METADATA of `name`."""
    fields = dict(re.findall(rb"^(Name|Version):[ \t]*(\S+)[ \t]*\r?$", text.split(b"\n\n", 1)[0], re.M))
    found, version = (fields.get(k, b"").decode("ascii", "replace") for k in (b"Name", b"Version"))
    return (found, version, text) if found and version and canonical(found) == canonical(name) else None


# A Requires-Dist line: the name, its extras, and its marker (after `;`).
REQUIRES = re.compile(
    rb"^Requires-Dist:[ \t]*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)[ \t]*(?:\[([^\]]*)\])?"
    rb"[^;\r]*(;[^\r]*)?\r?$"
)


def without_own(metadata: bytes, name: str) -> bytes:
    """METADATA whose requirements naming the project itself (a self-pin
    in an extra) ask for no version or URL, only for its extras (a line
    with none is left out): the resolve then takes this stub for them,
    never a release of the project from the index, which would shadow
    head's tree. The rule own_requirements.py applies to requirement
    files; this script runs alone, so it is written here too."""
    head, gap, body = metadata.partition(b"\n\n")
    kept = []
    for line in head.split(b"\n"):
        found = REQUIRES.match(line)
        if found is not None and canonical(found.group(1).decode("ascii")) == canonical(name):
            extras = b",".join(e.strip() for e in (found.group(2) or b"").split(b",") if e.strip())
            if not extras:
                continue
            line = b"Requires-Dist: %s[%s]%s" % (
                found.group(1),
                extras,
                b" " + found.group(3) if found.group(3) else b"",
            )
        kept.append(line)
    return b"\n".join(kept) + gap + body


def record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def write_stub(name: str, version: str, metadata: bytes, out: str) -> str:
    """The wheel `{name}-{version}-py3-none-any.whl` in `out`: METADATA,
    WHEEL and RECORD, nothing else."""
    stem = f"{re.sub(r'[-_.]+', '_', name)}-{version.replace('-', '_')}"
    info = f"{stem}.dist-info"
    files = {f"{info}/METADATA": metadata, f"{info}/WHEEL": WHEEL}
    record = "\n".join([*(record_line(p, d) for p, d in files.items()), f"{info}/RECORD,,"]) + "\n"
    wheel = os.path.join(out, f"{stem}-py3-none-any.whl")
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in {**files, f"{info}/RECORD": record.encode()}.items():
            archive.writestr(path, data)
    return wheel


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: own_stub.py VENV|- NAME OUTDIR", file=sys.stderr)
        return 2
    venv, name, out = argv
    if venv == "-":  # the METADATA the gate wrote from what the tree declares (declared.py)
        found = named_as(os.environ.get("GATE_OWN_METADATA", "").encode()[:MAX_METADATA], name)
    else:
        found = find_metadata(venv, name)
    if found is None:
        print(f"gatetui: no installed distribution named {name} with readable metadata in {venv}", file=sys.stderr)
        return 1
    print(write_stub(found[0], found[1], without_own(found[2], name), out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
