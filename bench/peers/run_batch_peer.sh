#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Bulk throughput against ONNX Runtime (issue 19): the same texts through edgebert one text per run,
# edgebert packed runs, and ONNX Runtime batched as sentence-transformers does it
# (../shared/peers/node/bench_ort_batch.mjs: sorted, batches of 32, padded), at 1 and 2 threads,
# interleaved round by round so that every configuration sees the same machine. Prints one line per
# measurement and a summary table (best sentences/s of each configuration over the rounds).
# usage: bench/peers/run_batch_peer.sh --ebm M.ebm --onnx M_int8.onnx --texts FILE [--peer-dir DIR]
#          [--rounds R (2)] [--batch-tokens "0 256 1024"] [--debian13] [--build DIR] [--peak-gops G]
#          [--query TEXT]
#   --peer-dir  a writable copy of ../shared/peers with node_modules (made and installed if absent)
#   --debian13  run edgebert-bench inside the Debian 13 root (scripts/debian13/root.sh; XNNPACK 2024),
#               from the build folder build/debian13 (the files must then lie inside this checkout)
#   --build     the (host) build folder with edgebert-bench (default build/release)
#   --peak-gops the one-core int8 peak (edgebert-int8-peak): edgebert-bench then reports the
#               fraction of the int8-peak limit in its JSON
#   --query     reranking (issue 25): each line of FILE is a passage, run as the pair (TEXT, passage)
#               through a cross-encoder (bench/peers/make_cross_encoder.py), as eb_session_rerank
#               runs them; ORT runs the same pairs' token ids (token types 0: the same operations)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SHARED=${EDGEBERT_SHARED:-$REPO/../shared}
EBM="" ONNX="" TEXTS="" PEER=/tmp/edgebert_batch_peer ROUNDS=2 NS="0 256 1024" D13=0 BUILD=$REPO/build/release PEAK=() QUERY=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ebm) EBM=$(realpath "$2"); shift 2 ;;
    --onnx) ONNX=$(realpath "$2"); shift 2 ;;
    --texts) TEXTS=$(realpath "$2"); shift 2 ;;
    --peer-dir) PEER=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --batch-tokens) NS=$2; shift 2 ;;
    --debian13) D13=1; shift ;;
    --build) BUILD=$(realpath "$2"); shift 2 ;;
    --peak-gops) PEAK=(--peak-gops "$2"); shift 2 ;;
    --query) QUERY=(--query "$2"); shift 2 ;;
    *) echo "usage: see the head of $0" >&2; exit 2 ;;
  esac
done
[ -n "$EBM" ] && [ -n "$ONNX" ] && [ -n "$TEXTS" ] || { echo "--ebm, --onnx and --texts are required" >&2; exit 2; }
[ -d "$PEER/node" ] || cp -r "$SHARED/peers" "$PEER"
[ -d "$PEER/node/node_modules/onnxruntime-node" ] ||
  (cd "$PEER/node" && timeout 600 npm install --ignore-scripts --no-audit --no-fund >/dev/null)
OUT=$REPO/build/batch-peer
mkdir -p "$OUT"

inroot() { echo "/src/${1#"$REPO"/}"; }  # a path inside this checkout, as the Debian 13 root sees it
bench() {  # threads batch-tokens json [--write-ids PATH] [extra args]
  local t=$1 n=$2 json=$3; shift 3
  if [ $D13 -eq 1 ]; then
    local args=() a
    for a in "$@"; do case "$a" in "$REPO"/*) args+=("$(inroot "$a")") ;; *) args+=("$a") ;; esac; done
    "$REPO/scripts/debian13/root.sh" --src "$REPO" -- /src/build/debian13/edgebert-bench \
      --model "$(inroot "$EBM")" --texts "$(inroot "$TEXTS")" --batch-tokens "$n" --threads "$t" \
      --json "$(inroot "$json")" "${args[@]}"
  else
    "$BUILD/edgebert-bench" --model "$EBM" --texts "$TEXTS" --batch-tokens "$n" --threads "$t" --json "$json" "$@"
  fi
}
if [ $D13 -eq 1 ]; then
  for f in "$EBM" "$TEXTS"; do
    case "$f" in "$REPO"/*) ;; *) echo "--debian13: $f must lie inside $REPO" >&2; exit 2 ;; esac
  done
fi

# The token ids ORT runs: exactly edgebert's tokenization of the same texts.
bench 1 512 "$OUT/ids.json" --runs 1 --write-ids "$OUT/ids.txt" "${QUERY[@]}" >/dev/null
: > "$OUT/results.txt"
for r in $(seq "$ROUNDS"); do
  for t in 1 2; do
    (cd "$PEER/node" && timeout 900 node bench_ort_batch.mjs --model "$ONNX" --threads "$t" --ids "$OUT/ids.txt" \
      --batch 32 --repeat 2) > "$OUT/ort_r${r}_t$t.json"
    sps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sentences_per_s"])' "$OUT/ort_r${r}_t$t.json")
    echo "round $r threads $t ort_batch32 $sps load $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT/results.txt"
    for n in $NS; do
      bench "$t" "$n" "$OUT/eb_r${r}_t${t}_n$n.json" --runs 2 "${PEAK[@]}" "${QUERY[@]}" >/dev/null
      sps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sentences_per_second"])' "$OUT/eb_r${r}_t${t}_n$n.json")
      echo "round $r threads $t edgebert_n$n $sps load $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT/results.txt"
    done
  done
done
python3 - "$OUT/results.txt" <<'EOF'
import sys, collections
best = collections.defaultdict(float)
for line in open(sys.argv[1]):
    f = line.split()
    best[(int(f[3]), f[4])] = max(best[(int(f[3]), f[4])], float(f[5]))
for t in (1, 2):
    ort = best.get((t, "ort_batch32"), 0)
    one = best.get((t, "edgebert_n0"), 0)
    print(f"threads {t}: ONNX Runtime batches of 32 {ort:.1f} sentences/s")
    for (tt, k), v in sorted(best.items()):
        if tt == t and k.startswith("edgebert"):
            print(f"  {k}: {v:.1f} sentences/s = {v / ort if ort else 0:.2f}x ORT, {v / one if one else 0:.2f}x one text per run")
EOF
