#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The ARM part of CI (called by scripts/test.sh; runs on its own too). For one target:
#   aarch64  64-bit ARM Linux (toolchains/aarch64-linux-gnu.cmake): the whole CTest suite under
#            qemu-aarch64, the kernel tests on two emulated CPUs (QEMU_CPU=max with the
#            dot-product instructions, cortex-a53 without);
#   armv7    32-bit ARMv7 + NEON, hard-float (toolchains/arm-linux-gnueabihf.cmake): a subset
#            under qemu-arm that covers every kernel, the planner, the tokenizer, the loader and
#            the C API (test_kernels, test_planner, test_tokenizer, test_checkpoint,
#            test_bad_input, test_session_plan, shared_library_exports).
# Both: install the cross compiler, qemu-user and a sysroot of Debian's ARM XNNPACK/pthreadpool/
# cpuinfo (scripts/arm/prepare_sysroot.sh), cross-build everything (Release), run the tests,
# compare edgebert-run's outputs with the x86 build's (scripts/arm/compare_with_x86.sh), check the
# installed package with the example program (scripts/check_install.sh) and print stripped sizes.
#
# usage: scripts/arm/test_arm.sh aarch64|armv7 [X86_BUILD_DIR]
#   X86_BUILD_DIR: an x86-64 Release build with edgebert-convert and edgebert-run (default
#   build/release, built if missing). Its converter makes the test models: .ebm files are the same
#   on every platform, and the emulated converter is ~60x slower (the cross-built converter is
#   still tested under emulation, by test_converter on aarch64).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
TARGET=${1:-}
X86=${2:-$ROOT/build/release}
case "$TARGET" in
  aarch64) DEBARCH=arm64 TRIPLE=aarch64-linux-gnu QARCH=aarch64 TOOLCHAIN=aarch64-linux-gnu.cmake
           TESTS=() ;;
  armv7) DEBARCH=armhf TRIPLE=arm-linux-gnueabihf QARCH=arm TOOLCHAIN=arm-linux-gnueabihf.cmake
         TESTS=(-R '^(test_kernels|test_planner|test_tokenizer|test_checkpoint|test_bad_input|test_session_plan|shared_library_exports)$') ;;
  *) echo "usage: $0 aarch64|armv7 [X86_BUILD_DIR]" >&2; exit 2 ;;
esac
# EDGEBERT_ARM_SYSROOT / EDGEBERT_ARM_BUILD: other folders (the Debian 13 stage uses its own).
SYSROOT=${EDGEBERT_ARM_SYSROOT:-$ROOT/build/arm-sysroot-$DEBARCH}
BUILD=${EDGEBERT_ARM_BUILD:-$ROOT/build/arm-$TARGET}
JOBS=$(nproc)
t0=$SECONDS

"$ROOT/scripts/install_deps.sh" "--$TARGET"
"$ROOT/scripts/arm/prepare_sysroot.sh" "$SYSROOT" "$DEBARCH"
# aarch64 with a host JDK and JUnit (Debian 12 CI, not the Debian 13 root): the Java bindings too,
# their JUnit tests run by Debian's arm64 JVM under qemu (scripts/arm/prepare_jdk_root.sh).
JAVA_ARGS=()
if [ "$TARGET" = aarch64 ] && [ "${EDGEBERT_ARM_JAVA:-1}" = 1 ] && command -v javac > /dev/null &&
   [ -f /usr/share/java/junit-platform-console-standalone.jar ]; then
  JDKROOT=${EDGEBERT_ARM_JDK_ROOT:-$ROOT/build/arm-jdk-arm64}
  "$ROOT/scripts/arm/prepare_jdk_root.sh" "$JDKROOT"
  JAVA_ARGS=(-DEDGEBERT_BUILD_JAVA=ON
    "-DEDGEBERT_TEST_JAVA=env QEMU_LD_PREFIX=$JDKROOT qemu-aarch64 $JDKROOT/usr/lib/jvm/java-17-openjdk-arm64/bin/java")
fi
if [ ! -x "$X86/edgebert-convert" ] || [ ! -x "$X86/edgebert-run" ]; then
  cmake -S "$ROOT" -B "$X86" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
  cmake --build "$X86" -j "$JOBS" --target edgebert-convert edgebert-run
fi
t_setup=$SECONDS

echo "== $TARGET: cross build (Release)"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$ROOT/toolchains/$TOOLCHAIN" -DEDGEBERT_SYSROOT="$SYSROOT" \
  -DEDGEBERT_HOST_CONVERTER="$X86/edgebert-convert" "${JAVA_ARGS[@]}"
# EDGEBERT_ARM_CTEST_ONLY: a ctest -R regex of the tests to run (CI's curated emulated subset,
# scripts/test.sh); EDGEBERT_ARM_CTEST_EXCLUDE: a ctest -E regex of tests to leave out.
if [ -n "${EDGEBERT_ARM_CTEST_ONLY:-}" ]; then TESTS+=(-R "$EDGEBERT_ARM_CTEST_ONLY"); fi
if [ -n "${EDGEBERT_ARM_CTEST_EXCLUDE:-}" ]; then TESTS+=(-E "$EDGEBERT_ARM_CTEST_EXCLUDE"); fi
if [ ${#TESTS[@]} -eq 0 ]; then
  cmake --build "$BUILD" -j "$JOBS"
else
  # A subset: only its test programs, the libraries and the installed tools are built (the rest
  # of the tests would be compiled for nothing; CI time, docs/cross-compiling.md#ci-time).
  mapfile -t targets < <(ctest --test-dir "$BUILD" -N "${TESTS[@]}" --show-only=json-v1 | python3 -c '
import json, os, sys
build = os.path.realpath(sys.argv[1])
for t in json.load(sys.stdin)["tests"]:
    for arg in t.get("command", []):  # the test program, also when it runs through a wrapper
        if os.path.realpath(os.path.dirname(arg) or ".").startswith(build):
            print(os.path.basename(arg))' "$BUILD" | sort -u)
  known=$(ninja -C "$BUILD" -t targets all | sed -n 's/^\([^:/]*\): .*/\1/p')
  wanted=(edgebert_shared edgebert_static edgebert-run edgebert-inspect edgebert-bench edgebert-convert edgebert-eval
          edgebert-tokenize)
  for t in "${targets[@]}"; do grep -qx "$t" <<< "$known" && wanted+=("$t"); done
  cmake --build "$BUILD" -j "$JOBS" --target "${wanted[@]}"
fi
t_build=$SECONDS

echo "== $TARGET: tests under qemu-$QARCH"
# EDGEBERT_EMULATED: tests that repeat a case per thread count run one count under qemu (CI time)
EDGEBERT_EMULATED=1 ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" "${TESTS[@]}"
t_test=$SECONDS

echo "== $TARGET: edgebert-run under qemu-$QARCH vs x86-64"
"$ROOT/scripts/arm/compare_with_x86.sh" "$X86" "$BUILD" "$SYSROOT" "$BUILD/compare" "$QARCH"

echo "== $TARGET: install, exports, example program against the installed package"
"$ROOT/scripts/check_install.sh" "$BUILD" "$BUILD/install-check" "$BUILD/compare/model.int8.ebm" \
  "$ROOT/toolchains/$TOOLCHAIN" "$SYSROOT"

echo "== $TARGET: stripped sizes"
for f in $(cd "$BUILD" && ls libedgebert.so.*.*.* 2>/dev/null) edgebert-run edgebert-bench edgebert-convert; do
  [ -f "$BUILD/$f" ] || continue
  tmp=$(mktemp)
  "$TRIPLE-strip" -o "$tmp" "$BUILD/$f"
  b=$(stat -c %s "$tmp")
  rm -f "$tmp"
  printf '%-22s %9d bytes (%d KiB) stripped\n' "$f" "$b" $(((b + 1023) / 1024))
done
echo "== $TARGET passed: setup $((t_setup - t0)) s, build $((t_build - t_setup)) s, tests $((t_test - t_build)) s, total $((SECONDS - t0)) s"
