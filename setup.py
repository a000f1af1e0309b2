"""Build hook: the wheel's policy pack must run where pip installs it, not where the repository keeps it.

pyproject.toml holds all metadata; this file only adapts two files of the pack (gpucloud/policies) in the build
tree, after setuptools copied the package: `PulumiPolicy.yaml` and `requirements.txt` (gpucloud/pack.py says why
and what they become). The repository's own copies, which an editable install uses, stay as they are.
"""

import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpucloud.pack import installed_pack_files  # a stdlib-only module of this source tree


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        pack = Path(self.build_lib) / "gpucloud" / "policies"
        for name, text in installed_pack_files(pack).items():
            target = pack / name
            target.unlink(missing_ok=True)  # may be a hard link to the source tree's file
            target.write_text(text)


setup(cmdclass={"build_py": BuildPy})
