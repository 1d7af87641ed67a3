#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite from a clean clone: installs dependencies, builds (Release), runs every
# Catch2 test (and the Python, Java and Kotlin binding tests) under CTest and checks the installed package (example program, exported symbols),
# then rebuilds with AddressSanitizer + UndefinedBehaviorSanitizer and runs the suite again, then
# cross-builds for aarch64 (the suite under qemu; its heaviest tests split with the Debian 13 aarch64 stage) and armv7 (a subset) with scripts/arm/test_arm.sh,
# then builds and runs the suite in a cached Debian 13 root against its XNNPACK (2024 API), x86-64
# and aarch64 under qemu (scripts/debian13/test_debian13.sh; --no-arm skips its aarch64 part too).
# A clang build of every target, as Android/iOS compile it (scripts/check_clang_build.sh): the
# sanitizer build is that build (a plain one with --no-sanitize).
# Reliability stages (scripts/reliability/, docs/reliability.md): each libFuzzer target for 30 s,
# the ThreadSanitizer build of the multi-threaded tests (clang on Debian 12, and GCC in the Debian
# 13 root, where the weight cache is read ahead on a second thread), and a short soak.
# The two emulated aarch64 stages run a curated subset by default (every kernel's exactness test on
# both emulated CPUs, the model-level kernel tables, the reference outputs, no allocation, bad
# input, the C API tasks, the weight cache, the tokenizers, the planner and loader): under qemu the
# suite is 30-100x slower than natively, and everything else runs natively on both XNNPACK
# generations. --full-arm runs the whole suite emulated instead (split over the two stages).
# Usage: scripts/test.sh [--no-sanitize] [--no-clang] [--no-arm] [--full-arm] [--no-debian13] [--no-fuzz] [--no-tsan] [--no-soak]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=$(nproc)
SANITIZE=1
CLANG=1
ARM=1
DEBIAN13=1
FUZZ=1
TSAN=1
SOAK=1
FULL_ARM=0
for arg in "$@"; do
  case "$arg" in
    --no-sanitize) SANITIZE=0 ;;
    --no-clang) CLANG=0 ;;
    --no-arm) ARM=0 ;;
    --no-debian13) DEBIAN13=0 ;;
    --no-fuzz) FUZZ=0 ;;
    --no-tsan) TSAN=0 ;;
    --no-soak) SOAK=0 ;;
    --full-arm) FULL_ARM=1 ;;
    *) echo "usage: $0 [--no-sanitize] [--no-clang] [--no-arm] [--full-arm] [--no-debian13] [--no-fuzz] [--no-tsan] [--no-soak]" >&2; exit 2 ;;
  esac
done
DEPS_FLAGS=()
[ $DEBIAN13 -eq 1 ] && DEPS_FLAGS+=(--debian13)
"$ROOT/scripts/install_deps.sh" "${DEPS_FLAGS[@]}"
# The curated emulated subsets (docs/cross-compiling.md#ci-time): every kernel's exactness test
# (both emulated CPUs) in each; Debian 12 (2022 XNNPACK): loader, planner, program, tokenizers,
# bad input, C API tasks, heads, words and QA, the LLM families' goldens; Debian 13 (2024 XNNPACK:
# dotprod / i8mm GEMMs, the float-QKV path phones run): kernel tables through whole models,
# reference outputs, no allocation, bad input, weight cache, the LLM families' goldens and their
# packed-against-single composition matrix.
ARM_KERNEL_TESTS='test_kernels|test_kernels_cortex_a53|test_kernels_families'
ARM_SUBSET_D12="^($ARM_KERNEL_TESTS|test_family_runtime_llm|test_bad_input|test_c_api_tasks|test_words_answer|test_runtime_heads|test_xnn_gemm|test_session_plan|test_planner|test_tokenizer|test_text_tokenizer|test_checkpoint|test_program|test_call_order|shared_library_exports)\$"
ARM_SUBSET_D13="^($ARM_KERNEL_TESTS|test_kernel_tables_model|test_runtime_reference|test_no_alloc|test_bad_input|test_xnn_gemm|test_weight_cache|test_c_api_tasks|test_family_runtime_llm|test_composition_llm|test_runtime_reference_slabs|test_no_alloc_slabs|test_weight_cache_slabs|test_int4_slabs)\$"

# Each stage's wall time goes to the log as it ends, and all of them at the end (CI budget).
TIMES="== stage times:" STAGE="" STAGE_T0=$SECONDS
stage() {
  if [ -n "$STAGE" ]; then
    echo "== ($STAGE: $((SECONDS - STAGE_T0)) s)"
    TIMES+=$'\n'"  $((SECONDS - STAGE_T0)) s  $STAGE"
  fi
  STAGE=$1 STAGE_T0=$SECONDS
  echo "== $1"
}

run_suite() {  # build-dir extra-cmake-args...  (CTEST_EXCLUDE: a ctest -E regex to leave out)
  local dir=$1; shift
  cmake -S "$ROOT" -B "$dir" -G Ninja "$@"
  cmake --build "$dir" -j "$JOBS"
  ctest --test-dir "$dir" --output-on-failure -j "$JOBS" ${CTEST_EXCLUDE:+-E "$CTEST_EXCLUDE"}
}

# The later stages' setup is network- and disk-bound (apt packages: clang, the cross compilers,
# qemu; the ARM sysroots; mmdebstrap's Debian 13 root, 2-4 min): it runs in the background while
# the Release stage compiles and tests (CI time). Two jobs: host apt work in order, and the root
# (mmdebstrap touches no host package state). Each later stage still runs its own setup, which
# then finds everything in place; if a background job failed, that setup retries and reports.
SETUP_LOGS=$ROOT/build/ci-setup
mkdir -p "$SETUP_LOGS"
host_setup() {
  local flags=()
  { [ $SANITIZE -eq 1 ] || [ $CLANG -eq 1 ] || [ $FUZZ -eq 1 ] || [ $TSAN -eq 1 ]; } && flags+=(--reliability)
  [ $ARM -eq 1 ] && flags+=(--aarch64 --armv7)
  [ ${#flags[@]} -eq 0 ] || "$ROOT/scripts/install_deps.sh" "${flags[@]}"
  if [ $ARM -eq 1 ]; then
    "$ROOT/scripts/arm/prepare_sysroot.sh" "$ROOT/build/arm-sysroot-arm64" arm64
    "$ROOT/scripts/arm/prepare_sysroot.sh" "$ROOT/build/arm-sysroot-armhf" armhf
  fi
}
# (a failing stage ends the script only once they end: apt or mmdebstrap killed halfway would
# leave a half-configured dpkg or a root with mounts behind)
trap 'wait' EXIT
host_setup > "$SETUP_LOGS/host.log" 2>&1 &
HOST_SETUP_PID=$!
ROOT_SETUP_PID=""
if [ $DEBIAN13 -eq 1 ]; then
  "$ROOT/scripts/debian13/root.sh" -- true > "$SETUP_LOGS/debian13-root.log" 2>&1 &
  ROOT_SETUP_PID=$!
fi
wait_setup() {  # pid what log: waits for a background setup job and shows its log
  local pid=$1 what=$2 log=$3 t0=$SECONDS
  [ -n "$pid" ] || return 0
  if wait "$pid"; then
    echo "== background setup ($what) done; waited $((SECONDS - t0)) s; log:"
  else
    echo "== background setup ($what) FAILED (the stages below retry it); log:"
  fi
  sed 's/^/   | /' "$log" | tail -40
}

stage "Release build and tests (with the Python, Java and Kotlin bindings' tests)"
run_suite "$ROOT/build/release" -DCMAKE_BUILD_TYPE=Release -DEDGEBERT_BUILD_JAVA=ON
stage "install, exports, example program against the installed package (x86-64)"
"$ROOT/scripts/check_install.sh" "$ROOT/build/release" "$ROOT/build/x86-install" \
  "$ROOT/build/release/testdata/ebm/base2_h12.int8.ebm"
wait_setup "$HOST_SETUP_PID" "host packages, ARM sysroots" "$SETUP_LOGS/host.log"
if [ $SANITIZE -eq 1 ] || [ $CLANG -eq 1 ] || [ $FUZZ -eq 1 ] || [ $TSAN -eq 1 ]; then
  "$ROOT/scripts/install_deps.sh" --reliability
fi
if [ $SANITIZE -eq 1 ]; then
  # One clang build serves two checks (CI time): every target compiled with clang, as Android and
  # iOS builds compile it (errors fail, warnings are listed: scripts/check_clang_build.sh), with
  # AddressSanitizer + UndefinedBehaviorSanitizer, and the suite run on it. (The HF conformance
  # comparison, ~170 s under ASan, the SPDX header check, the converter's signal and
  # file-system faults, ~90 s under ASan, and the numpy references' self-checks (Python only,
  # nothing for ASan to see) run in the Release stage; the fuzzers and the tokenizer
  # tests cover the tokenizers' memory safety here.)
  stage "clang AddressSanitizer + UndefinedBehaviorSanitizer build of every target, and tests"
  "$ROOT/scripts/check_clang_build.sh" "$ROOT/build/sanitize" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEDGEBERT_SANITIZE=ON
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$ROOT/build/sanitize" --output-on-failure -j "$JOBS" -E '^(tokenizer_conformance|spdx_headers|spdx_script|test_converter_faults|families_reference|reference_selfcheck)$'
elif [ $CLANG -eq 1 ]; then
  stage "clang build of every target (as Android and iOS builds compile it)"
  "$ROOT/scripts/check_clang_build.sh" "$ROOT/build/clang"
fi
if [ $FUZZ -eq 1 ]; then
  stage "libFuzzer targets, 30 s each, one per core at a time (clang, ASan + UBSan)"
  "$ROOT/scripts/reliability/fuzz.sh" 30 "$ROOT/build/fuzz"
fi
if [ $TSAN -eq 1 ]; then
  stage "ThreadSanitizer build of the multi-threaded tests"
  "$ROOT/scripts/reliability/tsan.sh" "$ROOT/build/tsan"
fi
if [ $SOAK -eq 1 ]; then
  stage "soak (short): 2 threads, lengths 1..max, zero allocations, zero RSS growth, bit-identical"
  "$ROOT/scripts/reliability/soak.sh" "$ROOT/build/release"
fi
if [ $ARM -eq 1 ]; then
  stage "ARM cross builds: tests under qemu, comparison with x86, install check"
  if [ $FULL_ARM -eq 0 ]; then
    # CI's curated emulated subset on Debian 12's XNNPACK (the Debian 13 stage has its own below;
    # the Java bindings' JUnit tests under the emulated arm64 JVM run with --full-arm)
    EDGEBERT_ARM_JAVA=0 EDGEBERT_ARM_CTEST_ONLY="$ARM_SUBSET_D12" "$ROOT/scripts/arm/test_arm.sh" aarch64 "$ROOT/build/release"
  elif [ $DEBIAN13 -eq 1 ]; then
    # Each test that takes minutes under qemu runs in one of the two emulated aarch64 stages, not
    # in both (the rest run in both): test_no_alloc, test_attention_threads, test_converter,
    # test_runtime_reference and test_kernel_tables_model run in the Debian 13 aarch64 stage, the
    # others in this one (scripts/debian13/test_debian13.sh lists them).
    EDGEBERT_ARM_CTEST_EXCLUDE='^(test_no_alloc|test_attention_threads|test_converter|test_runtime_reference|test_kernel_tables_model)$' \
      "$ROOT/scripts/arm/test_arm.sh" aarch64 "$ROOT/build/release"
  else
    "$ROOT/scripts/arm/test_arm.sh" aarch64 "$ROOT/build/release"
  fi
  "$ROOT/scripts/arm/test_arm.sh" armv7 "$ROOT/build/release"
fi
if [ $DEBIAN13 -eq 1 ]; then
  stage "Debian 13 root: build and tests against Debian 13's XNNPACK (x86-64, aarch64 under qemu)"
  wait_setup "$ROOT_SETUP_PID" "Debian 13 root" "$SETUP_LOGS/debian13-root.log"
  if [ $ARM -eq 0 ]; then
    "$ROOT/scripts/debian13/test_debian13.sh" --no-arm
  elif [ $FULL_ARM -eq 0 ]; then
    EDGEBERT_ARM_CTEST_ONLY="$ARM_SUBSET_D13" "$ROOT/scripts/debian13/test_debian13.sh"
  else
    "$ROOT/scripts/debian13/test_debian13.sh"
  fi
fi
if [ $DEBIAN13 -eq 1 ] && [ $TSAN -eq 1 ]; then
  # On Debian 13's XNNPACK the sessions of a model share one packed copy of its weights and the
  # weight cache file is read ahead on a second thread: the same tests under GCC's TSan there.
  stage "ThreadSanitizer build of the multi-threaded tests in the Debian 13 root (GCC; shared packed weights, cache read-ahead)"
  "$ROOT/scripts/debian13/root.sh" --src "$ROOT" -- env TSAN_CC=gcc TSAN_CXX=g++ scripts/reliability/tsan.sh /src/build/debian13-tsan
fi
stage "all tests passed"
echo "$TIMES"
