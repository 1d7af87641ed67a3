#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# loaded_cores.sh: edgebert-bench latency with 1 and 2 threads while LOADERS busy loops compete
# for the cores (a phone with background work; docs/batches.md, "Threads on loaded cores").
# Each load level runs ROUNDS rounds of (1 thread, 2 threads), interleaved, and prints one line per
# run: load, threads and edgebert-bench's latency line (min / median / mean / p90 / p99 / max), and
# for 2 threads how many runs the session sent to the caller alone (thread_governor.h; set
# EDGEBERT_ADAPTIVE_THREADS=0 to measure without it).
# Usage: bench/loaded_cores.sh MODEL.ebm [--loads "0 2 6"] [--rounds 3] [--seq-len 128] [--runs 30]
#        [--bench build/release/edgebert-bench]
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:?usage: bench/loaded_cores.sh MODEL.ebm [--loads "0 2 6"] [--rounds N] [--seq-len N] [--runs N] [--bench PATH]}
shift
LOADS="0 2 6" ROUNDS=3 SEQ=128 RUNS=30 BENCH=build/release/edgebert-bench
while [ $# -gt 0 ]; do
  case "$1" in
    --loads) LOADS=$2 ;;
    --rounds) ROUNDS=$2 ;;
    --seq-len) SEQ=$2 ;;
    --runs) RUNS=$2 ;;
    --bench) BENCH=$2 ;;
    *) echo "loaded_cores.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
[ -x "$BENCH" ] || { echo "loaded_cores.sh: no $BENCH (build first)" >&2; exit 1; }
LOADERS=()
stop_loaders() { [ ${#LOADERS[@]} -eq 0 ] || kill "${LOADERS[@]}" 2>/dev/null || true; LOADERS=(); }
trap stop_loaders EXIT
for load in $LOADS; do
  for _ in $(seq "$load"); do sh -c 'while :; do :; done' & LOADERS+=($!); done
  sleep 1
  for _ in $(seq "$ROUNDS"); do
    for threads in 1 2; do
      out=$("$BENCH" --model "$MODEL" --seq-len "$SEQ" --threads "$threads" --runs "$RUNS" 2>&1)
      line=$(grep '^latency' <<< "$out")
      alone=$(sed -n 's/^runs on the caller alone (cores found contended \([0-9]*\) times): \([0-9]*\).*/; \2 runs on the caller alone/p' <<< "$out")
      echo "load $load, $threads thread(s): ${line#*: }$alone"
    done
  done
  stop_loaders
done
