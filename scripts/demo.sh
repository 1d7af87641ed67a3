#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job, end to end, from a clean clone on Debian 12: installs what is needed, builds,
# makes a demo BERT checkpoint (HuggingFace layout, seeded random weights: no download is
# possible here), converts it to int8 and fp32 .ebm models, inspects one, runs both on a
# sentence and compares them.  Usage: scripts/demo.sh ["your sentence"]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TEXT=${1:-"the movie was good , not bad !"}
OUT=$ROOT/build/demo
"$ROOT/scripts/install_deps.sh"
cmake -S "$ROOT" -B "$ROOT/build/release" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$ROOT/build/release" -j "$(nproc)" --target edgebert-convert edgebert-run edgebert-inspect
BIN=$ROOT/build/release
mkdir -p "$OUT"
if [ ! -f "$OUT/checkpoint/config.json" ]; then
  echo "== making a demo checkpoint (4 layers, hidden 256, 4 heads, 2 labels, seeded weights)"
  /usr/bin/python3 "$ROOT/tests/reference/make_checkpoint.py" --out "$OUT/checkpoint" --hidden 256 --heads 4 \
    --layers 4 --intermediate 1024 --vocab 2048 --max-pos 128 --labels 2 --init fullscale --seed 1
fi
echo "== edgebert-convert (int8, built-in calibration)"
"$BIN/edgebert-convert" --input "$OUT/checkpoint" --output "$OUT/model.int8.ebm"
echo "== edgebert-convert --fp32 (reference model)"
"$BIN/edgebert-convert" --input "$OUT/checkpoint" --output "$OUT/model.fp32.ebm" --fp32 --quiet
echo "== edgebert-inspect (summary)"
"$BIN/edgebert-inspect" "$OUT/model.int8.ebm" | sed -n '1,6p;/^file size/,$p'
echo "== edgebert-run int8"
"$BIN/edgebert-run" --model "$OUT/model.int8.ebm" --text "$TEXT" --dump last_hidden_state="$OUT/int8.f32"
echo "== edgebert-run fp32"
"$BIN/edgebert-run" --model "$OUT/model.fp32.ebm" --text "$TEXT" --dump last_hidden_state="$OUT/fp32.f32"
/usr/bin/python3 - "$OUT/int8.f32" "$OUT/fp32.f32" 256 <<'PY'
import sys, numpy as np
a = np.fromfile(sys.argv[1], "<f4").reshape(-1, int(sys.argv[3]))
b = np.fromfile(sys.argv[2], "<f4").reshape(-1, int(sys.argv[3]))
cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
print(f"int8 vs fp32 last_hidden_state: per-token cosine min {cos.min():.5f} mean {cos.mean():.5f}, "
      f"max abs diff {np.abs(a - b).max():.4f}")
PY
