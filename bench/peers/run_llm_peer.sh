#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Full-size EmbeddingGemma-300M and Qwen3-Embedding-0.6B (random weights in the real shapes)
# against ONNX Runtime (issue 24): one command that writes the models, checks that both runtimes
# compute the same thing, times them and prints the table.
#
# usage: bench/peers/run_llm_peer.sh [WORK]
#   WORK (default build/llm_peer in this checkout; must be inside the checkout for the Debian 13
#   build, whose root sees the checkout as /src) receives a copy of ../shared/peers with
#   onnxruntime-node, the models (make_llm_onnx.py: HF sentence-transformers folder, fp32 ONNX, int8
#   ONNX, inputs, torch fp32 references), the .ebm files and every result JSON.
# Steps, per family:
#   1. make_llm_onnx.py --family F --out WORK/models/F (skipped when model_int8.onnx exists), and
#      make_llm_tokenizer.py (a synthetic tokenizer.json of the real size and shape; skipped when
#      the folder has one);
#   2. edgebert-convert (host build) to F.fp32.ebm (--fp32) and
#      F.int8.ebm, --max-seq-len the longest of LLM_SEQS;
#   3. check: edgebert-run --ids (fp32 and int8; the timed build's) and ONNX Runtime (fp32 and int8, 1 thread) dump
#      last_hidden_state and sentence_embedding of the same inputs; each is compared with the torch
#      fp32 reference, and edgebert fp32 with ORT fp32 (the gate: cosine >= 0.999, else exit 1);
#   4. timing: edgebert-bench --json (fp32 and int8 files) and bench_ort_modernbert.mjs (fp32 and
#      int8 ONNX), every sequence length, 1 and 2 threads; median ms -> tokens/s, peak RSS, file size.
# Environment:
#   LLM_FAMILIES ("gemma3_text qwen3"), LLM_SEQS (128,512), LLM_THREADS ("1 2"), LLM_RUNS (5),
#   LLM_BUDGET (seconds per ORT length, 60), LLM_LAYERS (fewer layers: a quick try of the script),
#   LLM_XNNPACK (debian13: edgebert-bench from build/debian13 inside scripts/debian13/root.sh, built
#   there if missing; host: build/release), LLM_SETUP_NICE (nice level of steps 1-3, 0),
#   EDGEBERT_BUILD (host build folder, build/release).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SHARED=${EDGEBERT_SHARED:-$REPO/../shared}
WORK=$(mkdir -p "${1:-$REPO/build/llm_peer}" && cd "${1:-$REPO/build/llm_peer}" && pwd)
FAMILIES=${LLM_FAMILIES:-gemma3_text qwen3}
SEQS=${LLM_SEQS:-128,512}
THREADS=${LLM_THREADS:-1 2}
RUNS=${LLM_RUNS:-5}
BUDGET=${LLM_BUDGET:-60}
XNN=${LLM_XNNPACK:-debian13}
SETUP_NICE="nice -n ${LLM_SETUP_NICE:-0}"
BUILD=${EDGEBERT_BUILD:-$REPO/build/release}
PY=/usr/bin/python3
log() { echo "[run_llm_peer] $*" >&2; }

# ---- the peers' copy, onnxruntime-node, OpenBLAS for the torch references
P=$WORK/peers
. "$HERE/peer_setup.sh"
peer_setup "$P" "$SHARED/peers"
cp "$HERE/make_llm_onnx.py" "$HERE/make_modernbert_onnx.py" "$P/"
cp "$HERE/bench_ort_modernbert.mjs" "$P/node/"

for t in edgebert-convert edgebert-run; do
  [ -x "$BUILD/$t" ] || { log "missing $BUILD/$t: build it first (cmake --build $BUILD --target $t)"; exit 1; }
done
case "$WORK" in "$REPO"/*) IN_ROOT=/src/${WORK#"$REPO"/} ;; *) IN_ROOT= ;; esac
if [ "$XNN" = debian13 ]; then
  [ -n "$IN_ROOT" ] || { log "WORK must be inside $REPO for LLM_XNNPACK=debian13"; exit 1; }
  if [ ! -x "$REPO/build/debian13/edgebert-bench" ] || [ ! -x "$REPO/build/debian13/edgebert-run" ]; then
    log "building edgebert-bench and edgebert-run in the Debian 13 root"
    $SETUP_NICE "$REPO/scripts/debian13/root.sh" -- bash -c 'cmake -S /src -B /src/build/debian13 -G Ninja \
      -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build /src/build/debian13 -j2 --target edgebert-bench edgebert-run' >&2
  fi
fi
# edgebert-bench MODEL JSON SEQ THREADS (paths under WORK)
eb_bench() {
  if [ "$XNN" = debian13 ]; then
    "$REPO/scripts/debian13/root.sh" -- /src/build/debian13/edgebert-bench --model "$IN_ROOT/${1#"$WORK"/}" \
      --seq-len "$3" --threads "$4" --warmup 1 --runs "$RUNS" --json "$IN_ROOT/${2#"$WORK"/}" >/dev/null
  else
    "$BUILD/edgebert-bench" --model "$1" --seq-len "$3" --threads "$4" --warmup 1 --runs "$RUNS" --json "$2" >/dev/null
  fi
}
# edgebert-run MODEL IDS PREFIX: dumps PREFIX.last_hidden_state.f32 and PREFIX.sentence_embedding.f32
# with the build that is timed (its XNNPACK decides, e.g., whether the gated FFN's down GEMM
# quantizes its input per row: docs/llm-encoders.md)
eb_run() {
  if [ "$XNN" = debian13 ]; then
    $SETUP_NICE "$REPO/scripts/debian13/root.sh" -- /src/build/debian13/edgebert-run --model "$IN_ROOT/${1#"$WORK"/}" \
      --max-seq-len "$MAXLEN" --ids "$2" --dump "last_hidden_state=$IN_ROOT/${3#"$WORK"/}.last_hidden_state.f32" \
      --dump "sentence_embedding=$IN_ROOT/${3#"$WORK"/}.sentence_embedding.f32"
  else
    $SETUP_NICE "$BUILD/edgebert-run" --model "$1" --max-seq-len "$MAXLEN" --ids "$2" \
      --dump "last_hidden_state=$3.last_hidden_state.f32" --dump "sentence_embedding=$3.sentence_embedding.f32"
  fi
}
ids_of() { $PY -c 'import json,sys; print(" ".join(map(str, json.load(open(sys.argv[1]))[sys.argv[2]])))' "$1" "$2"; }
MAXLEN=$(echo "$SEQS" | tr ',' '\n' | sort -n | tail -1)

fail=0
for F in $FAMILIES; do
  M=$WORK/models/$F
  E=$WORK/ebm
  O=$WORK/out/$F
  mkdir -p "$E" "$O"
  if [ ! -f "$M/model_int8.onnx" ]; then
    log "$F: writing the model (make_llm_onnx.py)"
    $SETUP_NICE $PY "$P/make_llm_onnx.py" --family "$F" --out "$M" --seqs "$SEQS" ${LLM_LAYERS:+--layers $LLM_LAYERS} >&2
  fi
  # a tokenizer of the real size and shape (make_llm_tokenizer.py), so that the .ebm files load
  # what the real ones load (the timings feed ids; the warm start includes building its tables)
  if [ ! -f "$M/tokenizer.json" ]; then
    log "$F: writing a full-size tokenizer (make_llm_tokenizer.py)"
    $PY "$HERE/make_llm_tokenizer.py" --family "$F" --out "$M" >&2
  fi
  # Qwen3-0.6B in fp32 (2.38 GB) is over FlatBuffers' 2 GiB: its payloads follow the FlatBuffer
  # (schema_version 7, docs/format.md)
  eb_vs="fp32 int8"
  for v in fp32 int8; do
    ebm=$E/$F.$v.ebm
    if [ ! -f "$ebm" ] || [ "$ebm" -ot "$M/model.safetensors" ] || [ "$ebm" -ot "$M/tokenizer.json" ]; then
      log "$F: edgebert-convert $v"
      if ! $SETUP_NICE "$BUILD/edgebert-convert" --input "$M" --output "$ebm" --max-seq-len "$MAXLEN" \
        $([ $v = fp32 ] && echo --fp32) >"$O/convert_$v.log" 2>&1; then
        cat "$O/convert_$v.log" >&2
        exit 1
      fi
    fi
  done
  # ---- 3. the same computation? (edgebert's outputs from edgebert-run; ORT's from its 1-thread timing run)
  for v in $eb_vs; do
    mkdir -p "$O/eb_$v"
    for s in ${SEQS//,/ }; do
      eb_run "$E/$F.$v.ebm" "$(ids_of "$M/inputs/seq$s.json" input_ids)" "$O/eb_$v/seq$s" >/dev/null
    done
  done
  # ---- 4. timing (nice 0: the caller chooses the machine's quiet time)
  for t in $THREADS; do
    for v in fp32 int8; do
      onnx=$M/model_int8.onnx; [ $v = fp32 ] && onnx=$M/onnx_fp32/model.onnx
      log "$F: ONNX Runtime $v, $t thread(s)"
      timeout 3000 node "$P/node/bench_ort_modernbert.mjs" --model "$onnx" --threads "$t" --inputs "$M/inputs" \
        --seqs "$SEQS" --warmup 1 --runs "$RUNS" --budget "$BUDGET" --outdir "$O/ort_${v}_t$t" --dump-all 1 \
        >"$O/ort_${v}_t$t.json"
      for s in ${SEQS//,/ }; do
        [[ " $eb_vs " == *" $v "* ]] || continue
        log "$F: edgebert-bench $v, seq $s, $t thread(s) ($XNN)"
        eb_bench "$E/$F.$v.ebm" "$O/eb_${v}_s${s}_t$t.json" "$s" "$t"
      done
    done
  done
  rm -f "$O"/acc_*.json
  for v in fp32 int8; do
    $PY "$P/make_llm_onnx.py" --family "$F" --out "$M" --seqs "$SEQS" --compare "$O/ort_${v}_t1" >"$O/acc_ort_$v.json"
  done
  for v in $eb_vs; do
    $PY "$P/make_llm_onnx.py" --family "$F" --out "$M" --seqs "$SEQS" --compare "$O/eb_$v" >"$O/acc_eb_$v.json"
  done
  if [ -d "$O/eb_fp32" ] && [ "$eb_vs" != int8 ]; then
    $PY "$P/make_llm_onnx.py" --family "$F" --out "$M" --seqs "$SEQS" --compare "$O/eb_fp32" \
      --reference "$O/ort_fp32_t1" >"$O/acc_eb_vs_ort_fp32.json"
  fi
done

# ---- the table
$PY - "$WORK" "$FAMILIES" "$SEQS" "$THREADS" "$XNN" <<'EOF' || fail=1
import glob, json, os, sys
work, fams, seqs, threads, xnn = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(","), sys.argv[4].split(), sys.argv[5]
name = {"gemma3_text": "EmbeddingGemma-300M shape", "qwen3": "Qwen3-Embedding-0.6B shape"}
def du(path):
    return sum(os.path.getsize(p) for p in glob.glob(os.path.join(path, "*"))) if os.path.isdir(path) else os.path.getsize(path)
ok = True
print("| model | runtime | weights | file MB | seq | threads | median ms | tokens/s | peak RSS MB | vs ORT int8 |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
for f in fams:
    o, m = os.path.join(work, "out", f), os.path.join(work, "models", f)
    for s in seqs:
        for t in threads:
            ort = {v: json.load(open(os.path.join(o, "ort_%s_t%s.json" % (v, t)))) for v in ("int8", "fp32")}
            base = ort["int8"]["seqs"][s]["median_ms"]
            rows = []
            for v in ("int8", "fp32"):
                p = os.path.join(o, "eb_%s_s%s_t%s.json" % (v, s, t))
                if not os.path.exists(p):  # fp32 over 2 GiB
                    continue
                j = json.load(open(p))
                ms = j["latency_ms"]["median"]
                rows.append(("edgebert (%s XNNPACK)" % xnn, v, j["memory"]["model_file_bytes"], ms, j["memory"]["peak_rss_bytes"]))
            for v in ("int8", "fp32"):
                r = ort[v]
                size = du(os.path.join(m, "model_int8.onnx") if v == "int8" else os.path.join(m, "onnx_fp32"))
                rows.append((r["runtime"], v, size, r["seqs"][s]["median_ms"], r["peak_rss_bytes"]))
            for rt, v, size, ms, rss in rows:
                print("| %s | %s | %s | %.0f | %s | %s | %.1f | %.0f | %.0f | %.2fx |" % (
                    name[f], rt, v, size / 1e6, s, t, ms, int(s) / (ms / 1000), rss / 1e6, ms / base))
print()
print("| model | seq | output | edgebert fp32 vs ORT fp32 | edgebert fp32 vs torch | edgebert int8 vs torch | ORT int8 vs torch |")
print("|---|---:|---|---:|---:|---:|---:|")
for f in fams:
    o = os.path.join(work, "out", f)
    keys = ("eb_vs_ort_fp32", "eb_fp32", "eb_int8", "ort_int8")
    acc = {k: json.loads(open(os.path.join(o, "acc_%s.json" % k)).read().strip().splitlines()[-1])
           for k in keys if os.path.exists(os.path.join(o, "acc_%s.json" % k))}
    for s in seqs:
        for out in ("last_hidden_state", "sentence_embedding"):
            c = [acc[k][s][out]["min_cosine"] if k in acc else None for k in keys]
            ok = ok and (c[0] is None or c[0] >= 0.999) and all(x is not None for x in c[2:])
            print("| %s | %s | %s (%s) | %s |" % (
                name[f], s, out, "lowest per-token cosine" if out == "last_hidden_state" else "cosine",
                " | ".join("n/a" if x is None else "%.6f" % x for x in c)))
if not ok:
    print("\nFAIL: edgebert fp32 and ONNX Runtime fp32 differ (cosine < 0.999)")
sys.exit(0 if ok else 1)
EOF
exit $fail
