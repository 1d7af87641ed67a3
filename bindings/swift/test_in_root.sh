#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds libedgebert inside the cached Debian 13 root (against Debian 13's XNNPACK; its Swift
# toolchain needs Debian 13's glibc) and runs `swift test` of this package there, through CTest
# (test swift_bindings, which first makes and converts the test models).
# usage: bindings/swift/test_in_root.sh [BUILD_DIR inside the checkout, default build/debian13]
# Needs root (scripts/debian13/root.sh creates the root on first use).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build/debian13}
"$ROOT/scripts/debian13/root.sh" -- sh -ec "
  cmake -S /src -B /src/$BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
  cmake --build /src/$BUILD -j \$(nproc) --target edgebert_shared edgebert-convert
  ctest --test-dir /src/$BUILD -R '^swift_bindings\$' --output-on-failure"
