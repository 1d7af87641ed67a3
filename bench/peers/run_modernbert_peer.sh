#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ModernBERT-base speed peer (issue 18): ONNX Runtime int8 (and fp32) at seq 512 and 2048, 1 and 2
# threads, on random weights. Copies ../shared/peers to WORK (default /tmp/modernbert_peer), installs
# onnxruntime-node there as its run_all.sh does, writes the model with make_modernbert_onnx.py and
# times it with bench_ort_modernbert.mjs; prints one JSON line per cell plus the accuracy of each
# output against the torch fp32 reference.
# usage: bench/peers/run_modernbert_peer.sh [WORK] [--fp32]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SHARED=${EDGEBERT_SHARED:-$HERE/../../../shared}
WORK=${1:-/tmp/modernbert_peer}
. "$HERE/peer_setup.sh"
peer_setup "$WORK" "$SHARED/peers"
cp "$HERE/make_modernbert_onnx.py" "$WORK/"
cp "$HERE/bench_ort_modernbert.mjs" "$WORK/node/"
M=$WORK/models/modernbert_base
[ -f "$M/model_int8.onnx" ] || /usr/bin/python3 "$WORK/make_modernbert_onnx.py" --out "$M"
variants="int8"
[ "${2:-}" = "--fp32" ] && variants="int8 fp32"
for v in $variants; do
  onnx=$M/model_int8.onnx; [ "$v" = fp32 ] && onnx=$M/model.onnx
  for t in 1 2; do
    out=$WORK/out/ort_${v}_t$t
    timeout 3000 node "$WORK/node/bench_ort_modernbert.mjs" --model "$onnx" --threads $t --inputs "$M/inputs" \
      --seqs 512,2048 --warmup 1 --runs 5 --budget 60 --outdir "$out"
    /usr/bin/python3 "$WORK/make_modernbert_onnx.py" --out "$M" --compare "$out"
  done
done
