#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Warm start with and without the weight cache's payload check (issue 23): fresh edgebert-bench
# processes, alternating the three kinds of start round by round (no cache; warm cache, payload
# verified, the default; warm cache with EDGEBERT_WEIGHT_CACHE_VERIFY=0), each reporting init_ms
# (load + program and packed weights + first session) and the first run; prints every value, the
# medians and the ratios to the start without a cache. The cache is written once before the rounds.
# usage: bench/warm_start.sh BENCH MODEL.ebm CACHE [ROUNDS (5)] [SEQ_LEN (8)]
#   BENCH: an edgebert-bench built against XNNPACK 2024+ (the 2022 API has no weight cache); run
#   the script inside the Debian 13 root for that build (scripts/debian13/root.sh -- bash ...).
set -euo pipefail
B=$1 M=$2 C=$3 ROUNDS=${4:-5} SEQ=${5:-8}
J=$(mktemp -d)
trap 'rm -rf "$J"' EXIT
rm -f "$C"
"$B" --model "$M" --seq-len "$SEQ" --runs 1 --weight-cache "$C" --json "$J/cold.json" >/dev/null
field() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["init_ms"], j["first_run_ms"])' "$1"; }
for r in $(seq "$ROUNDS"); do
  "$B" --model "$M" --seq-len "$SEQ" --runs 1 --json "$J/none.json" >/dev/null
  echo "none $(field "$J/none.json")"
  "$B" --model "$M" --seq-len "$SEQ" --runs 1 --weight-cache "$C" --json "$J/verified.json" >/dev/null
  echo "verified $(field "$J/verified.json")"
  EDGEBERT_WEIGHT_CACHE_VERIFY=0 "$B" --model "$M" --seq-len "$SEQ" --runs 1 --weight-cache "$C" --json "$J/unverified.json" >/dev/null
  echo "unverified $(field "$J/unverified.json")"
done | tee "$J/all.txt"
python3 - "$J/all.txt" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    k, init, first = line.split()
    rows.setdefault(k, []).append((float(init), float(first)))
base = statistics.median(i for i, _ in rows["none"])
for k in ("none", "verified", "unverified"):
    inits = [i for i, _ in rows[k]]
    firsts = [f for _, f in rows[k]]
    m = statistics.median(inits)
    print("%-10s init_ms median %7.1f (%s)  / no cache %.3fx   first run median %.1f ms" % (
        k, m, " ".join("%.1f" % i for i in inits), m / base, statistics.median(firsts)))
PY
