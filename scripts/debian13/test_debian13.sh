#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Debian 13 (trixie) stage of CI: builds edgebert against Debian 13's XNNPACK (the 2024 API:
# reshape + setup, fully-connected qs8_qc8w) inside the cached Debian 13 root
# (scripts/debian13/root.sh) and runs the whole CTest suite there; then, unless --no-arm,
# cross-builds for aarch64 against Debian 13's arm64 XNNPACK/pthreadpool/cpuinfo AND its arm64
# C library (a sysroot unpacked from Debian 13's arm64 .debs inside the root) and runs the suite
# under qemu-aarch64 (QEMU_CPU=max: dotprod and i8mm kernels), comparing with x86-64 as
# scripts/arm/test_arm.sh does.
# Build folders: build/debian13 and build/debian13-arm-aarch64 (+ sysroot build/debian13-sysroot-arm64).
# usage: scripts/debian13/test_debian13.sh [--no-arm]   (needs root)
# EDGEBERT_ARM_CTEST_ONLY (a ctest -R regex), when set, picks the emulated aarch64 tests instead
# (CI's curated subset: scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
ARM=1
for arg in "$@"; do
  case "$arg" in
    --no-arm) ARM=0 ;;
    *) echo "usage: $0 [--no-arm]" >&2; exit 2 ;;
  esac
done
t0=$SECONDS
scripts/debian13/root.sh -- true
t_root=$SECONDS
echo "== Debian 13 (x86-64): Release build and tests"
scripts/debian13/root.sh -- sh -ec '
  cmake -S /src -B /src/build/debian13 -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build /src/build/debian13 -j "$(nproc)"
  ctest --test-dir /src/build/debian13 --output-on-failure -j "$(nproc)" -E "$0"' \
  '^(spdx_headers|spdx_script|test_converter_faults|families_reference|reference_selfcheck|python_wheel)$'
# (left out here, CI time: the source tree's license lines, the converter tool's signal and
# file-system faults, the numpy references' own self-checks and the wheel's packaging do not
# depend on the XNNPACK generation; the Debian 12 Release stage runs them. The Python binding's
# tests on this build's library run here as python_bindings.)
t_x86=$SECONDS
if [ $ARM -eq 1 ]; then
  echo "== Debian 13 aarch64: cross build against Debian 13 arm64 XNNPACK + libc, tests under qemu"
  # Without EDGEBERT_ARM_CTEST_ONLY: the suite less test_accuracy (~7 min emulated),
  # test_family_runtime (~6 min), test_packed_batch (~5 min), test_attention_threads_portable
  # (~3 min), test_composition and tokenizer_conformance, which run on x86-64 here and in the
  # Debian 12 aarch64 stage of a full run (scripts/test.sh --full-arm).
  scripts/debian13/root.sh -- env EDGEBERT_ARM_CTEST_EXCLUDE='^(test_accuracy|test_family_runtime|test_packed_batch|test_attention_threads_portable|test_composition|tokenizer_conformance)$' \
    EDGEBERT_ARM_CTEST_ONLY="${EDGEBERT_ARM_CTEST_ONLY:-}" \
    EDGEBERT_ARM_SYSROOT=/src/build/debian13-sysroot-arm64 \
    EDGEBERT_ARM_BUILD=/src/build/debian13-arm-aarch64 EDGEBERT_SYSROOT_LIBC=1 \
    scripts/arm/test_arm.sh aarch64 /src/build/debian13
fi
echo "== Debian 13 passed: root $((t_root - t0)) s, x86-64 $((t_x86 - t_root)) s, aarch64 $((SECONDS - t_x86)) s"
