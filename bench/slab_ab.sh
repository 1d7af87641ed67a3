#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Column slabs against whole GEMMs (docs/xnnpack.md, "Column slabs"): fresh edgebert-bench
# processes alternating EDGEBERT_GEMM_SLAB_BYTES=0 (whole) and =SLAB (default 524288: half a 1 MB
# L2), pair by pair, so both settings see the same minutes. Prints one line per pair: the median ms
# of single runs at each sequence length, or, with --texts, the best sentences/s of packed passes.
# usage: bench/slab_ab.sh BENCH MODEL.ebm PAIRS RUNS THREADS SEQ...
#        bench/slab_ab.sh BENCH MODEL.ebm PAIRS RUNS THREADS --texts FILE BATCH_TOKENS...
#   BENCH: an edgebert-bench built against XNNPACK 2024+ (slabs change nothing on the 2022 API's
#   path otherwise); run inside the Debian 13 root for that build. SLAB=N sets the slab bytes.
set -euo pipefail
B=$1 M=$2 PAIRS=$3 RUNS=$4 T=$5
shift 5
TEXTS=""
if [ "${1:-}" = "--texts" ]; then TEXTS=$2; shift 2; fi
SLAB=${SLAB:-524288}
J=$(mktemp -d)
trap 'rm -rf "$J"' EXIT
for n in "$@"; do
  for p in $(seq "$PAIRS"); do
    line="threads $T $([ -n "$TEXTS" ] && echo "batch-tokens $n sentences/s" || echo "seq $n ms"):"
    for s in 0 "$SLAB"; do
      if [ -n "$TEXTS" ]; then
        EDGEBERT_GEMM_SLAB_BYTES=$s "$B" --model "$M" --texts "$TEXTS" --batch-tokens "$n" --threads "$T" \
          --runs "$RUNS" --json "$J/r.json" > /dev/null
        v=$(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["sentences_per_second"], 1))' "$J/r.json")
      else
        EDGEBERT_GEMM_SLAB_BYTES=$s "$B" --model "$M" --seq-len "$n" --threads "$T" --runs "$RUNS" \
          --json "$J/r.json" > /dev/null
        v=$(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["latency_ms"]["median"], 2))' "$J/r.json")
      fi
      line+=" $([ "$s" = 0 ] && echo whole || echo "slabs($s)")=$v"
    done
    echo "$line"
  done
done
