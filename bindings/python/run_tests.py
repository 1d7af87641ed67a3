# SPDX-License-Identifier: Apache-2.0
"""Runs the binding's pytest suite (tests/) for CTest: exits 77, which CTest reports as skipped,
with a message when pytest or numpy is missing from this Python, instead of failing.

usage: python3 run_tests.py [PYTEST_ARGS...]
"""

import importlib.util
import os
import sys

SKIP = 77  # the tests' SKIP_RETURN_CODE in bindings/CMakeLists.txt


def main(argv):
    missing = [m for m in ("pytest", "numpy") if importlib.util.find_spec(m) is None]
    if missing:
        print("skipped: %s has no %s (Debian: apt-get install %s)" % (
            sys.executable, " or ".join(missing), " ".join("python3-" + m for m in missing)))
        return SKIP
    # Not this folder (sys.path[0] for a script): which edgebert package is imported is the
    # conftest's choice (the checkout's, or the installed one with EDGEBERT_TEST_INSTALLED=1).
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    import pytest
    tests = os.path.join(here, "tests")
    return pytest.main(["-q", "-rs", "-p", "no:cacheprovider", tests] + argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
