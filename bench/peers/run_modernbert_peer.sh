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
[ -d "$WORK/node" ] || cp -r "$SHARED/peers" "$WORK"
cp "$HERE/make_modernbert_onnx.py" "$WORK/"
cp "$HERE/bench_ort_modernbert.mjs" "$WORK/node/"
[ -d "$WORK/node/node_modules/onnxruntime-node" ] ||
  (cd "$WORK/node" && timeout 600 npm install --ignore-scripts --no-audit --no-fund >/dev/null)
# torch 1.13 links libblas.so.3 (netlib's reference BLAS here): use Debian's OpenBLAS, unpacked
# under WORK as run_all.sh does, for the torch reference outputs.
OB=$WORK/build/openblas/usr/lib/x86_64-linux-gnu/openblas-openmp
if [ ! -e "$OB/libblas.so.3" ]; then
  mkdir -p "$WORK/build/deb"
  (cd "$WORK/build/deb" && timeout 120 apt-get download libopenblas0-openmp >/dev/null 2>&1) || true
  deb=$(ls "$WORK"/build/deb/libopenblas0-openmp_*.deb 2>/dev/null | head -1 || true)
  [ -n "$deb" ] && dpkg -x "$deb" "$WORK/build/openblas"
fi
[ -e "$OB/libblas.so.3" ] && export LD_LIBRARY_PATH=$OB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
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
