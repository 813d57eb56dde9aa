"""A run's home, furnished as a new user's is: the distribution's skeleton.

Code that takes its right path only where HOME is empty (`not
os.listdir(os.path.expanduser("~"))`) would see an empty home at every gate
run and on no person's machine or CI runner: a user made by useradd or
adduser starts with /etc/skel's files (.bashrc, .profile, .bash_logout on
Debian and Ubuntu). So each home the gate makes gets them too, owned by the
run's uid. A machine without a skeleton gets the same three names with the
few lines every distribution's hold, never an empty home.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

SKELETON = Path("/etc/skel")
# Where the machine has no skeleton: what Debian's hold, cut to what they do.
PLAIN = {
    ".bash_logout": "# ~/.bash_logout: executed by bash(1) when login shell exits.\n",
    ".bashrc": "# ~/.bashrc: executed by bash(1) for non-login shells.\n\n"
    "# If not running interactively, don't do anything\ncase $- in\n    *i*) ;;\n      *) return;;\nesac\n",
    ".profile": "# ~/.profile: executed by the command interpreter for login shells.\n\n"
    'if [ -n "$BASH_VERSION" ] && [ -f "$HOME/.bashrc" ]; then\n    . "$HOME/.bashrc"\nfi\n',
}


def furnish(home: Path, uid: int | None, skeleton: Path = SKELETON) -> None:
    """Copy the skeleton into `home`, a folder the gate just made (so the
    supervisor writes nowhere the run could have shaped), each file the
    run's uid's where it has one. Links in the skeleton are copied as links,
    as useradd does."""
    if skeleton.is_dir() and any(skeleton.iterdir()):
        shutil.copytree(skeleton, home, symlinks=True, dirs_exist_ok=True)
    else:
        for name, text in PLAIN.items():
            (home / name).write_text(text)
    if uid is None:
        return
    for folder, dirs, files in os.walk(home):
        for name in (*dirs, *files):
            os.lchown(os.path.join(folder, name), uid, uid)
    os.lchown(home, uid, uid)
