#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets (clang, -DEDGEBERT_FUZZ=ON: ASan + UBSan) and runs each one for a
# bounded time on a copy of its committed seed corpus. Any crash, leak, sanitizer report, timeout
# or out-of-memory fails the script and leaves the input in BUILD/artifacts/NAME/ (keep it under
# tests/fuzz/regressions/NAME/ once fixed). Prints executions per fuzzer (docs/reliability.md).
# Usage: scripts/reliability/fuzz.sh [SECONDS_PER_FUZZER (60)] [BUILD_DIR (build/fuzz)] [NAME...]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
SECONDS_EACH=${1:-60}
BUILD=${2:-$ROOT/build/fuzz}
shift $(( $# > 2 ? 2 : $# ))
NAMES=("$@")
[ ${#NAMES[@]} -gt 0 ] || NAMES=(fuzz_model fuzz_checkpoint fuzz_tokenizer fuzz_tokenizer_json fuzz_c_api fuzz_weight_cache)

cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DEDGEBERT_FUZZ=ON -DEDGEBERT_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD" --target "${NAMES[@]}"

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Fuzzers run JOBS at a time (default: the number of cores; each libFuzzer process is
# single-threaded), each for SECONDS_EACH; their summaries print in NAMES order once all are done.
JOBS=${JOBS:-$(nproc)}
fuzz_one() {  # name: runs one fuzzer, writes its summary to BUILD/NAME.summary, fails on a finding
  local name=$1 work="$BUILD/work/$1" artifacts="$BUILD/artifacts/$1" log="$BUILD/$1.log"
  local dict=()
  mkdir -p "$work" "$artifacts"
  [ -f "$ROOT/tests/fuzz/$name.dict" ] && dict=(-dict="$ROOT/tests/fuzz/$name.dict")
  if "$BUILD/tests/fuzz/$name" "$work" "$ROOT/tests/fuzz/corpus/$name" "${dict[@]}" \
      -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1; then
    local execs cov
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    echo "$name: $execs executions, $cov, corpus $(ls "$work" | wc -l) inputs, no findings" >"$BUILD/$name.summary"
  else
    { echo "$name: FINDING (log $log, input in $artifacts/)"
      grep -m1 -A25 -E "ERROR: |runtime error|WARNING: " "$log" || tail -30 "$log"; } >"$BUILD/$name.summary"
    return 1
  fi
}
echo "== ${#NAMES[@]} fuzzers, ${SECONDS_EACH} s each, $JOBS at a time"
rm -f "$BUILD"/*.summary
for name in "${NAMES[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  fuzz_one "$name" &
done
wait || true
status=0  # (from the summaries: a fuzzer that wrote none did not finish)
for name in "${NAMES[@]}"; do
  if [ -f "$BUILD/$name.summary" ]; then cat "$BUILD/$name.summary"; else echo "$name: no summary (killed?)"; status=1; fi
  grep -q ': FINDING' "$BUILD/$name.summary" 2>/dev/null && status=1
done
exit $status
