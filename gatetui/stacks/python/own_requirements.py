"""The resolve's requirements with head's own project left out of them.

Head's project is the tree, installed before the resolve. A requirement
file that names the project too (pip-compile output of its dev tools,
which depend on it: click's requirements/dev.txt pins `click==8.1.7`) asked
for a second copy: uv refused the pair, pip's fallback resolve took the
index's release, the dependency layer held it, and it shadowed head's code
in every run (make eval: click 8.1.8's new tests ran against 8.1.7). So the
resolve reads copies in which a requirement naming the project (PEP 503
name) is left out; one that asks for extras keeps them, as
`name[extras]` without version or URL: the installed project with those
extras, what it asked for but the copy. Files named with `-r`/`-c` inside
the tree are copied the same way and named by their copy's absolute path;
every other line stays word for word (pip and uv read a local path
relative to the working directory, the tree's root, so it means the same
from a copy elsewhere). What is not the tree's, or not readable here, is
passed on by reference, for the resolver to read as it did before.

Runs in the resolve's sandbox (`python3 -I -S`, stdlib only) on head's
files, read as hostile: only inside the tree, size-capped, each once.

    python3 -I -S own_requirements.py OWN OUTDIR FILE... -- LINE...

writes OUTDIR/lines.txt (the LINEs, as a file at the tree's root would
hold them) and OUTDIR/tree/FILE for each FILE; says on stderr what it left
out.
"""

from __future__ import annotations

import os
import re
import sys

MAX_BYTES, MAX_FILES = 1 << 20, 200
INCLUDE = re.compile(r"^(--requirement|--constraint|-r|-c)\s*=?\s*(\S+)$")
REQUIREMENT = re.compile(r"^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[([^\]]*)\])?\s*(.*)$")
COMMENT = re.compile(r"(^|\s)#.*$")


def canonical(name: str) -> str:
    """A distribution's name as the index compares it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def names_own(line: str, own: str) -> str | None:
    """For a requirement line that names the project `own`: what stays of
    it ('' or `own[extras] ; marker`); None for any other line."""
    found = REQUIREMENT.match(COMMENT.sub("", line).strip())
    if found is None or canonical(found.group(1)) != canonical(own):
        return None
    rest = found.group(3)
    if rest and rest[0] not in "<>=!~(;@" and not rest.startswith("--"):
        return None  # a path or file name that starts like the project's name
    extras = ",".join(e.strip() for e in (found.group(2) or "").split(",") if e.strip())
    if not extras:
        return ""
    marker = re.split(r"\s--", rest.partition(";")[2])[0].strip()
    return f"{found.group(1)}[{extras}]" + (f" ; {marker}" if marker else "")


def logical_lines(text: str) -> list[str]:
    """The file's lines as pip reads them: a line ending in a backslash
    joined to the next."""
    out: list[str] = []
    held = ""
    for line in text.splitlines():
        if line.endswith("\\"):
            held += line[:-1]
            continue
        out.append(held + line)
        held = ""
    return out + ([held] if held else [])


class Copier:
    """The copies of one resolve: each file of the tree at most once."""

    def __init__(self, own: str, out: str, root: str):
        self.own, self.out, self.root = own, out, os.path.realpath(root)
        self.done: dict[str, str] = {}  # real path -> its copy

    def lines(self, lines: list[str], where: str, said: str) -> list[str]:
        """`lines` (of a file in folder `where`, shown as `said`) as the copy holds them."""
        kept: list[str] = []
        for line in lines:
            stays = names_own(line, self.own)
            if stays is not None:
                print(
                    f"gatetui: {said}: {line.strip()[:200]} names the project itself (its tree is "
                    f"installed): {'kept as ' + stays if stays else 'left out'}",
                    file=sys.stderr,
                )
                kept += [stays] if stays else []
                continue
            include = INCLUDE.match(COMMENT.sub("", line).strip())
            kept.append(f"{include.group(1)} {self.file(include.group(2), where)}" if include else line)
        return kept

    def file(self, named: str, where: str) -> str:
        """The path a reference to `named` (relative to `where`) should read:
        the copy of a file of the tree, else the file itself."""
        if re.match(r"^[a-z][a-z0-9+.-]*://", named):
            return named
        path = os.path.normpath(os.path.join(where, named))
        real = os.path.realpath(path)
        if real in self.done:
            return self.done[real]
        inside = real.startswith(self.root + os.sep)
        if not inside or len(self.done) >= MAX_FILES or not os.path.isfile(real) or os.path.getsize(real) > MAX_BYTES:
            return path
        copy = os.path.join(self.out, "tree", os.path.relpath(real, self.root))
        self.done[real] = copy
        with open(real, encoding="utf-8", errors="replace") as handle:
            text = handle.read(MAX_BYTES)
        kept = self.lines(logical_lines(text), os.path.dirname(real), os.path.relpath(real, self.root))
        write(copy, kept)
        return copy


def write(path: str, lines: list[str]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.write("".join(f"{line}\n" for line in lines))


def main(argv: list[str]) -> int:
    """Each FILE copied under its own name (the command names the copy so),
    the LINEs to lines.txt; 2 for a usage the gate never writes."""
    if len(argv) < 3 or "--" not in argv[2:]:
        print("usage: own_requirements.py OWN OUTDIR FILE... -- LINE...", file=sys.stderr)
        return 2
    own, out, rest = argv[0], argv[1], argv[2:]
    files, lines = rest[: rest.index("--")], rest[rest.index("--") + 1 :]
    copier, root = Copier(own, out, os.getcwd()), os.getcwd()
    for name in files:  # each under its own name: the command names it so
        path = copier.file(name, root)
        expected = os.path.join(out, "tree", name)
        if path != expected:  # not copied (outside the tree, missing, too big): read where it is
            write(expected, [f"-r {path}"])
    write(os.path.join(out, "lines.txt"), copier.lines(paired(lines), root, "the declared requirements"))
    return 0


def paired(words: list[str]) -> list[str]:
    """The LINEs as lines: an option that takes a file (`-r`, as tox's deps
    give it, a word of its own) joined to the file it names."""
    out: list[str] = []
    taking = False
    for word in words:
        if taking:
            out[-1] += f" {word}"
        else:
            out.append(word)
        taking = not taking and word in ("-r", "-c", "--requirement", "--constraint")
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
