#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Cross-platform check: the same .ebm models (converted once, on the host, as users deploy them)
# run with edgebert-run natively on x86-64 and under qemu (aarch64 or 32-bit arm), and the
# outputs must agree:
#   fp32: every output within 1e-4 (max abs); int8: per-token cosine >= 0.999 (last_hidden_state
#   and pooler_output; logits are reported).
# Each model runs on two emulated CPUs: aarch64 QEMU_CPU=max (int8 attention with the dot-product
# instructions) and cortex-a53 (without); arm cortex-a7 (ARMv7 + NEON) and max.
# The model is a full-scale-weight BERT (4 layers, hidden 256, 4 heads, 2 labels, seeded) made
# by tests/reference/make_checkpoint.py; the texts include a long one and padding-free short ones.
#
# usage: scripts/arm/compare_with_x86.sh X86_BUILD_DIR ARM_BUILD_DIR SYSROOT WORK_DIR [aarch64|arm]
set -euo pipefail
if [ $# -ne 4 ] && [ $# -ne 5 ]; then
  echo "usage: $0 X86_BUILD_DIR ARM_BUILD_DIR SYSROOT WORK_DIR [aarch64|arm]" >&2
  exit 2
fi
QARCH=${5:-aarch64}
case "$QARCH" in
  aarch64) CPUS=(max cortex-a53) ;;
  arm) CPUS=(cortex-a7 max) ;;
  *) echo "unknown architecture $QARCH" >&2; exit 2 ;;
esac
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
X86=$(cd "$1" && pwd) ARM=$(cd "$2" && pwd) SYSROOT=$(cd "$3" && pwd) WORK=$4
PY=/usr/bin/python3
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
QEMU_RUN=("$ROOT/scripts/arm/qemu-run.sh" "$QARCH" "$SYSROOT")

if [ ! -f "$WORK/checkpoint/config.json" ]; then
  "$PY" "$ROOT/tests/reference/make_checkpoint.py" --out "$WORK/checkpoint" --hidden 256 --heads 4 \
    --layers 4 --intermediate 1024 --vocab 2048 --max-pos 128 --labels 2 --init fullscale --seed 1 > /dev/null
fi
"$X86/edgebert-convert" --input "$WORK/checkpoint" --output "$WORK/model.fp32.ebm" --fp32 --quiet > /dev/null
"$X86/edgebert-convert" --input "$WORK/checkpoint" --output "$WORK/model.int8.ebm" --quiet > /dev/null

TEXTS=("the movie was good , not bad !"
       "edge inference without allocations"
       "a much longer input keeps going : it mixes words , numbers like 42 , punctuation ( and brackets ) so that the attention rows are long and the softmax spreads over many keys .")
OUTS=(last_hidden_state pooler_output logits)

run() {  # tag model text-index command...
  local tag=$1 model=$2 i=$3
  shift 3
  local dumps=()
  for o in "${OUTS[@]}"; do dumps+=(--dump "$o=$WORK/$tag.$i.$o"); done
  "$@" --model "$model" --text "${TEXTS[$i]}" --threads 2 "${dumps[@]}" > /dev/null
}

for i in "${!TEXTS[@]}"; do
  for kind in fp32 int8; do
    run "x86.$kind" "$WORK/model.$kind.ebm" "$i" "$X86/edgebert-run"
    for cpu in "${CPUS[@]}"; do
      QEMU_CPU=$cpu run "$QARCH-$cpu.$kind" "$WORK/model.$kind.ebm" "$i" "${QEMU_RUN[@]}" "$ARM/edgebert-run"
    done
  done
done

"$PY" - "$WORK" "${#TEXTS[@]}" "$QARCH" "${CPUS[*]}" "${OUTS[@]}" <<'PY'
import sys, numpy as np
work, ntexts, qarch, cpus, outs = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(), sys.argv[5:]
tags = [f"{qarch}-{c}" for c in cpus]
hidden = 256
def load(tag, i, o):
    a = np.fromfile(f"{work}/{tag}.{i}.{o}", "<f4")
    return a.reshape(-1, hidden) if o == "last_hidden_state" else a.reshape(1, -1)
def cos_rows(a, b):
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
ok = True
for i in range(ntexts):
    for arm in tags:
        for o in outs:
            x = load("x86.fp32", i, o); y = load(arm + ".fp32", i, o)
            d = float(np.abs(x - y).max()) if x.shape == y.shape else float("inf")
            good = d <= 1e-4
            ok &= good
            print(f"text {i} fp32 {o:18s} x86 vs {arm:18s}: max abs diff {d:.2e} (<= 1e-4) {'ok' if good else 'FAIL'}")
    for arm in tags:
        for o in outs:
            x = load("x86.int8", i, o); y = load(arm + ".int8", i, o)
            if x.shape != y.shape:
                print(f"text {i} {arm} {o}: shape {y.shape} != {x.shape} FAIL"); ok = False; continue
            d = float(np.abs(x - y).max())
            if o == "logits":
                print(f"text {i} int8 {o:18s} x86 vs {arm:18s}: max abs diff {d:.2e} (reported)")
                continue
            c = float(cos_rows(x, y).min())
            good = c >= 0.999
            ok &= good
            print(f"text {i} int8 {o:18s} x86 vs {arm:18s}: min per-token cosine {c:.6f} (>= 0.999), "
                  f"max abs diff {d:.2e} {'ok' if good else 'FAIL'}")
print(f"x86 vs {qarch} outputs agree" if ok else f"x86 vs {qarch} outputs DIFFER")
sys.exit(0 if ok else 1)
PY
