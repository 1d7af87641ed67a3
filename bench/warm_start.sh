#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Warm start with and without the weight cache's payload check (issue 23): fresh edgebert-bench
# processes, alternating the three kinds of start round by round (no cache; warm cache, payload
# verified, the default; warm cache with EDGEBERT_WEIGHT_CACHE_VERIFY=0), each reporting init_ms
# (load + program and packed weights + first session) and the first run; prints every value, the
# medians and the ratios to the start without a cache. The cache is written once before the rounds;
# every warm start must find it loaded (the script stops otherwise).
# usage: bench/warm_start.sh BENCH MODEL.ebm CACHE [ROUNDS (5)] [SEQ_LEN (8)]
#   BENCH: an edgebert-bench built against XNNPACK 2024+ (the 2022 API has no weight cache); run
#   the script inside the Debian 13 root for that build (scripts/debian13/root.sh -- bash ...).
#   WARM_START_BASELINE=OTHER_BENCH: also runs another build's two warm starts in every round, for
#   an A/B of two builds in the same minutes: no cache, baseline verified, baseline unverified, no
#   cache again, verified, unverified. Each build's verified start comes right after a start without
#   a cache, as in the plain rounds: a verified start right after another one finds much of the
#   88 MB payload still in the CPU's last-level cache and is 0.4-0.6 ms faster (BERT-base on a Xeon
#   VM), which would favour whichever build runs second. Both builds must accept the same cache
#   file (same runtime version, XNNPACK build and program layout).
set -euo pipefail
B=$1 M=$2 C=$3 ROUNDS=${4:-5} SEQ=${5:-8}
BASE=${WARM_START_BASELINE:-}
J=$(mktemp -d)
trap 'rm -rf "$J"' EXIT
rm -f "$C"
"$B" --model "$M" --seq-len "$SEQ" --runs 1 --weight-cache "$C" --json "$J/cold.json" >/dev/null
# init_ms and first_run_ms of a run's JSON; a warm start that did not load the cache is an error
field() {
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); s=j["init"]["weight_cache"]
if sys.argv[2] == "warm" and s != "loaded": sys.exit("warm start found the cache " + s + ": " + j["init"]["weight_cache_message"])
print(j["init_ms"], j["first_run_ms"])' "$1" "$2"
}
start() {  # KIND BENCH [warm]: one fresh process, its line
  local kind=$1 bench=$2 warm=${3:-}
  if [ -z "$warm" ]; then
    "$bench" --model "$M" --seq-len "$SEQ" --runs 1 --json "$J/run.json" >/dev/null
  elif [ "$warm" = verified ]; then
    "$bench" --model "$M" --seq-len "$SEQ" --runs 1 --weight-cache "$C" --json "$J/run.json" >/dev/null
  else
    EDGEBERT_WEIGHT_CACHE_VERIFY=0 "$bench" --model "$M" --seq-len "$SEQ" --runs 1 --weight-cache "$C" \
      --json "$J/run.json" >/dev/null
  fi
  echo "$kind $(field "$J/run.json" "${warm:+warm}")"
}
for r in $(seq "$ROUNDS"); do
  if [ -n "$BASE" ]; then
    start none "$B"
    start baseline_verified "$BASE" verified
    start baseline_unverified "$BASE" unverified
  fi
  start none "$B"
  start verified "$B" verified
  start unverified "$B" unverified
done | tee "$J/all.txt"
python3 - "$J/all.txt" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    k, init, first = line.split()
    rows.setdefault(k, []).append((float(init), float(first)))
base = statistics.median(i for i, _ in rows["none"])
for k in ("none", "baseline_verified", "verified", "baseline_unverified", "unverified"):
    if k not in rows:
        continue
    inits = [i for i, _ in rows[k]]
    firsts = [f for _, f in rows[k]]
    m = statistics.median(inits)
    print("%-19s init_ms median %7.1f (%s)  / no cache %.3fx   first run median %.1f ms" % (
        k, m, " ".join("%.1f" % i for i in inits), m / base, statistics.median(firsts)))
PY
