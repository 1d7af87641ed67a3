#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ThreadSanitizer job: builds only the multi-threaded tests with -DEDGEBERT_TSAN=ON (clang, or the
# compilers in TSAN_CC / TSAN_CXX: the Debian 13 root has GCC only; the
# whole runtime and converter instrumented, pthreadpool's hand-over annotated by
# tests/tsan/pthreadpool_annotations.cpp) and runs them. test_threads must be free of TSan
# reports; tsan_race_control must produce one (proof that the annotations hide nothing between
# tasks). No suppressions are used. Usage: scripts/reliability/tsan.sh [BUILD_DIR (build/tsan)]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${1:-$ROOT/build/tsan}
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="${TSAN_CC:-clang}" -DCMAKE_CXX_COMPILER="${TSAN_CXX:-clang++}" -DEDGEBERT_TSAN=ON >/dev/null
cmake --build "$BUILD" --target test_threads tsan_race_control
# halt_on_error: the first report fails the test; second_deadlock_stack for lock reports.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 history_size=4" \
  ctest --test-dir "$BUILD" -R '^(test_threads|tsan_race_control)$' --output-on-failure
