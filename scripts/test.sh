#!/usr/bin/env bash
# The whole test suite from a clean clone: installs dependencies, builds (Release), runs every
# Catch2 test under CTest, then rebuilds with AddressSanitizer + UndefinedBehaviorSanitizer and
# runs the suite again. Usage: scripts/test.sh [--no-sanitize]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=$(nproc)
"$ROOT/scripts/install_deps.sh"

run_suite() {  # build-dir extra-cmake-args...
  local dir=$1; shift
  cmake -S "$ROOT" -B "$dir" -G Ninja "$@"
  cmake --build "$dir" -j "$JOBS"
  ctest --test-dir "$dir" --output-on-failure -j "$JOBS"
}

echo "== Release build and tests"
run_suite "$ROOT/build/release" -DCMAKE_BUILD_TYPE=Release
if [ "${1:-}" != "--no-sanitize" ]; then
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_suite "$ROOT/build/sanitize" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEDGEBERT_SANITIZE=ON
fi
echo "== all tests passed"
