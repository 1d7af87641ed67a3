#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The wheel as a user gets it (CTest `python_wheel`): builds it from this build's libedgebert.so
# (build_wheel.sh), installs it into a fresh venv offline (--no-index; numpy and pytest come from
# the system through --system-site-packages), and runs the binding's pytest suite from that venv,
# in a neutral folder, against the installed package (EDGEBERT_TEST_INSTALLED=1) and its bundled
# library (EDGEBERT_LIBRARY unset). Exits 77 (CTest: skipped) with a message when this Python
# lacks venv, setuptools, wheel, pytest or numpy.
# usage: bindings/python/test_wheel.sh PYTHON LIBEDGEBERT_SO VERSION WORK_DIR   (EDGEBERT_TESTDATA set)
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 PYTHON LIBEDGEBERT_SO VERSION WORK_DIR" >&2; exit 2; }
PYTHON=$1 LIB=$2 VERSION=$3 WORK=$4
HERE=$(cd "$(dirname "$0")" && pwd)
missing=$("$PYTHON" - <<'PY'
import importlib.util
need = {"ensurepip": "python3-venv", "setuptools": "python3-setuptools", "wheel": "python3-wheel",
        "pytest": "python3-pytest", "numpy": "python3-numpy"}
print(" ".join(pkg for mod, pkg in need.items() if importlib.util.find_spec(mod) is None))
PY
)
if [ -n "$missing" ]; then
  echo "skipped: $PYTHON cannot build and test the wheel offline (Debian: apt-get install $missing)"
  exit 77
fi
t0=$SECONDS
rm -rf "$WORK"
mkdir -p "$WORK/run"
wheel=$("$HERE/build_wheel.sh" "$PYTHON" "$LIB" "$VERSION" "$WORK/wheel" | tail -1)
t_wheel=$SECONDS
"$PYTHON" -m venv --system-site-packages "$WORK/venv"
PIP_DISABLE_PIP_VERSION_CHECK=1 "$WORK/venv/bin/python" -m pip install --quiet --no-index --no-cache-dir \
  --no-build-isolation "$wheel"
t_install=$SECONDS
echo "[python_wheel] $(basename "$wheel"): built in $((t_wheel - t0)) s, venv + install $((t_install - t_wheel)) s"
cd "$WORK/run"
status=0
env -u EDGEBERT_LIBRARY EDGEBERT_TEST_INSTALLED=1 EDGEBERT_EXPECTED_VERSION="$VERSION" \
  PYTHONDONTWRITEBYTECODE=1 "$WORK/venv/bin/python" -B "$HERE/run_tests.py" || status=$?
echo "[python_wheel] pytest in the venv: $((SECONDS - t_install)) s"
exit $status
