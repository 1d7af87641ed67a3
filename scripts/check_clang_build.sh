#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds EVERY target of the tree (runtime, converter, tools, bench, tests, fuzz replays, JNI when
# a JDK is there) with clang, as Android's NDK and Xcode compile it: a plain Release build, no
# sanitizers, no tests run. A compile error fails the script; warnings are counted and listed
# (the aim is zero, as with GCC). A separate build rather than the fuzz build's: the
# sanitizer-instrumented fuzz build compiles the tools and tests about 1.7x slower than this whole
# plain build (clang 14 on a shared 2-core machine: ~195 vs ~115 CPU-seconds).
# Extra arguments go to cmake after the defaults: CI's sanitizer stage is this build with
# -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEDGEBERT_SANITIZE=ON (scripts/test.sh), then its tests.
# usage: scripts/check_clang_build.sh [BUILD_DIR (build/clang)] [CMAKE_ARG...]   (needs clang: install_deps.sh --reliability)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${1:-$ROOT/build/clang}
shift $(( $# > 0 ? 1 : 0 ))
java=OFF
command -v javac > /dev/null && java=ON
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DEDGEBERT_BUILD_JAVA=$java "$@" > /dev/null
t0=$SECONDS
if ! cmake --build "$BUILD" -j "$(nproc)" > "$BUILD/build.log" 2>&1; then
  grep -E -A8 '^FAILED|error:' "$BUILD/build.log" | head -80
  echo "clang build of the whole tree failed (log: $BUILD/build.log)"
  exit 1
fi
warnings=$(grep -c 'warning:' "$BUILD/build.log" || true)
echo "clang $(clang --version | sed -n 's/.*clang version \([0-9.]*\).*/\1/p') build of every target: $((SECONDS - t0)) s, $warnings warnings"
grep -A3 'warning:' "$BUILD/build.log" || true
