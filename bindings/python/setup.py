# SPDX-License-Identifier: Apache-2.0
"""setuptools hook of the edgebert wheel (the metadata is in pyproject.toml).

The package has no Python extension module but carries libedgebert.so, so its wheel is not pure:
it is tagged py3-none-PLATFORM (any Python 3, no Python ABI, this machine's platform). The wheel
is built from the folder build_wheel.sh stages (package + libedgebert.so + _version.py); built
from the bare source folder it would carry no library, so that stops with a message instead.
"""

import os
import sys

from setuptools import setup
from setuptools.dist import Distribution

try:
    from setuptools.command.bdist_wheel import bdist_wheel  # setuptools >= 70.1 (Debian 13)
except ImportError:
    try:
        from wheel.bdist_wheel import bdist_wheel  # older setuptools (Debian 12: 66)
    except ImportError:  # wheel missing: setuptools reports it when a wheel is asked for
        bdist_wheel = None

HERE = os.path.dirname(os.path.abspath(__file__))
for needed in ("libedgebert.so", "_version.py"):
    if not os.path.exists(os.path.join(HERE, "edgebert", needed)):
        sys.exit("edgebert: %s missing from %s: build the wheel from a CMake build folder with "
                 "`cmake --build BUILD --target python_wheel` (bindings/python/build_wheel.sh)"
                 % (needed, os.path.join(HERE, "edgebert")))

cmdclass = {}
if bdist_wheel is not None:
    class PlatformWheel(bdist_wheel):
        """py3-none-PLATFORM: ctypes needs no Python ABI, the bundled library needs the platform."""

        def get_tag(self):
            _python, _abi, platform = super().get_tag()
            return "py3", "none", platform

    cmdclass["bdist_wheel"] = PlatformWheel



class BinaryDistribution(Distribution):
    """Carries a native library: platform-specific, installed to platlib."""

    def has_ext_modules(self):
        return True


setup(cmdclass=cmdclass, distclass=BinaryDistribution)
