"""The build step pyproject.toml cannot state: libpebblesim.so.

`pip install --no-build-isolation .` runs this: make builds the shared
library and the explicit-DAG module it opens (in build/, as `make` does),
and both are copied into the package beside __init__.py, where the module
looks first. The package's version is the library's (PS_VERSION).
"""

import os
import re
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    with open(os.path.join(ROOT, "include", "pebblesim", "common.h")) as f:
        return re.search(r'^#define PS_VERSION "(.*)"$', f.read(), re.M).group(1)


def build_options():
    """The options build/ was made with (build/flags), so that make keeps
    the build as it is instead of making it again with the defaults."""
    options = []
    try:
        with open(os.path.join(ROOT, "build", "flags")) as f:
            for line in f:
                name, _, value = line.rstrip("\n").partition(" = ")
                if name in ("CC", "OPT", "CFLAGS", "LDFLAGS", "WERROR"):
                    options.append("%s=%s" % (name, value))
    except OSError:
        pass
    return options


class BuildWithLibrary(build_py):
    """build_py, then libpebblesim.so and libpebblesim-explicit.so.MAJOR
    into the built package."""

    def run(self):
        super().run()
        major, minor = version().split(".")[:2]
        shlib = "build/libpebblesim.so.%s.%s" % (major, minor)
        module = "build/libpebblesim-explicit.so.%s" % major
        subprocess.run(["make", "-C", ROOT] + build_options() + [shlib, module], check=True)
        target = os.path.join(self.build_lib, "pebblesim")
        shutil.copyfile(os.path.join(ROOT, shlib), os.path.join(target, "libpebblesim.so"))
        shutil.copyfile(os.path.join(ROOT, module),
                        os.path.join(target, os.path.basename(module)))


class BinaryDistribution(Distribution):
    """A wheel of this machine's architecture: it holds a shared library."""

    def has_ext_modules(self):
        return True


os.makedirs(os.path.join(ROOT, "build", "python"), exist_ok=True)
setup(
    version=version(),
    cmdclass={"build_py": BuildWithLibrary},
    distclass=BinaryDistribution,
    # setuptools' own build tree and egg-info inside the project's build/
    options={"build": {"build_base": "build/python"},
             "egg_info": {"egg_base": "build/python"}},
)
