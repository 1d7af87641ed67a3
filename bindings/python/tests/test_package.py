# SPDX-License-Identifier: Apache-2.0
"""Which package and library the tests exercise: from an installed wheel (EDGEBERT_TEST_INSTALLED=1,
test_wheel.sh), the package in site-packages with its bundled libedgebert.so, whose version is
CMake's project version (EDGEBERT_EXPECTED_VERSION); from the checkout, EDGEBERT_LIBRARY's."""

import os
import subprocess
import sys

import pytest

import edgebert
from edgebert import _library

SOURCE_PACKAGE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "edgebert"))
INSTALLED = bool(os.environ.get("EDGEBERT_TEST_INSTALLED"))
installed_only = pytest.mark.skipif(not INSTALLED, reason="tests an installed wheel (EDGEBERT_TEST_INSTALLED=1)")
checkout_only = pytest.mark.skipif(INSTALLED, reason="tests the checkout's package")


def package_dir():
    return os.path.dirname(os.path.abspath(edgebert.__file__))


@installed_only
def test_installed_package_is_not_the_checkout():
    assert os.path.normpath(package_dir()) != SOURCE_PACKAGE
    assert os.path.basename(os.path.dirname(package_dir())) == "site-packages", package_dir()


@installed_only
def test_installed_package_loads_its_bundled_library():
    assert _library.api().path == os.path.join(package_dir(), "libedgebert.so")


@installed_only
def test_wheel_version_is_cmake_project_version():
    from importlib.metadata import version as dist_version
    expected = os.environ.get("EDGEBERT_EXPECTED_VERSION")
    assert expected, "test_wheel.sh passes CMake's PROJECT_VERSION as EDGEBERT_EXPECTED_VERSION"
    assert edgebert.__version__ == expected
    assert dist_version("edgebert") == expected
    assert edgebert.version() == expected  # the bundled library's eb_version()


@installed_only
def test_bundled_library_wins_over_edgebert_library(tmp_path):
    code = "import edgebert, edgebert._library as L\nprint(edgebert.version())\nprint(L.api().path)\n"
    env = dict(os.environ, EDGEBERT_LIBRARY="/nonexistent/libedgebert.so")
    out = subprocess.run([sys.executable, "-B", "-c", code], env=env, cwd=str(tmp_path),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [edgebert.__version__, os.path.join(package_dir(), "libedgebert.so")]


@checkout_only
def test_checkout_package_uses_edgebert_library():
    assert os.path.normpath(package_dir()) == SOURCE_PACKAGE
    assert edgebert.__version__ is None
    lib = os.environ.get("EDGEBERT_LIBRARY")
    if not lib:
        pytest.skip("EDGEBERT_LIBRARY not set")
    assert _library.api().path == lib
