#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Warm-start A/B of two builds that cannot share a model file (a format change: the old build
# cannot read the new file, so bench/warm_start.sh's WARM_START_BASELINE does not apply): runs
# bench/warm_start.sh for build A on its file, then for build B on its own, REPS times in
# alternation, ROUNDS rounds each, and prints each run's medians (A and B lines interleaved).
# usage: bench/warm_start_files.sh REPS ROUNDS BENCH_A MODEL_A CACHE_A BENCH_B MODEL_B CACHE_B
#   (inside the Debian 13 root for builds against XNNPACK 2024+, as bench/warm_start.sh)
set -euo pipefail
[ $# -eq 8 ] || { sed -n 3,8p "$0" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
REPS=$1 ROUNDS=$2
for _ in $(seq "$REPS"); do
  "$HERE/warm_start.sh" "$3" "$4" "$5" "$ROUNDS" | grep "init_ms median" | sed 's/^/A /'
  "$HERE/warm_start.sh" "$6" "$7" "$8" "$ROUNDS" | grep "init_ms median" | sed 's/^/B /'
done
