#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The retrieval example end to end (README, "Search on the device"): builds libedgebert and the
# converter, makes two checkpoints in the shapes of all-MiniLM-L6-v2 (embedder: BertModel + mean
# pooling + Normalize, a sentence-transformers folder) and ms-marco-MiniLM-L-6-v2 (reranker:
# BertForSequenceClassification with one label), both 6 layers, hidden 384, 12 heads, FFN 1536,
# with the real uncased BERT vocabulary from ../shared and seeded random weights (no checkpoint
# can be downloaded here: the rankings are not meaningful, the timings are), converts them to int8
# and runs search.py over the first 300 SST-2 validation sentences of ../shared.
# usage: examples/retrieval/run.sh ["query"] [--threads N]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SHARED=${EDGEBERT_SHARED:-$ROOT/../shared}
SST2=$SHARED/models/bert-tiny-sst2-encoder
[ -f "$SST2/sst2_validation.tsv" ] || { echo "run.sh: needs $SST2 (sst2_validation.tsv, vocab.txt)" >&2; exit 2; }
OUT=$ROOT/build/retrieval-example
BIN=$ROOT/build/release
cmake -S "$ROOT" -B "$BIN" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$BIN" -j "$(nproc)" --target edgebert_shared edgebert-convert > /dev/null
mkdir -p "$OUT"
make() {  # folder labels seed
  [ -f "$1/config.json" ] && return 0
  /usr/bin/python3 "$ROOT/tests/reference/make_checkpoint.py" --out "$1" --hidden 384 --heads 12 --layers 6 \
    --intermediate 1536 --vocab 30522 --max-pos 512 --labels "$2" --seed "$3" > /dev/null
  cp "$SST2/vocab.txt" "$1/vocab.txt"
}
make "$OUT/embedder" 0 11
make "$OUT/reranker" 1 12
if [ ! -f "$OUT/embedder/modules.json" ]; then  # sentence-transformers: Transformer, mean Pooling, Normalize
  mkdir -p "$OUT/embedder/1_Pooling" "$OUT/embedder/2_Normalize"
  cat > "$OUT/embedder/modules.json" <<'JSON'
[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
 {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
 {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]
JSON
  echo '{"word_embedding_dimension": 384, "pooling_mode_mean_tokens": true}' > "$OUT/embedder/1_Pooling/config.json"
fi
for m in embedder reranker; do
  [ -f "$OUT/$m.ebm" ] || "$BIN/edgebert-convert" --input "$OUT/$m" --output "$OUT/$m.ebm" --quiet
done
QUERY=${1:-"a funny and moving film about friendship"}
[ $# -gt 0 ] && shift
EDGEBERT_LIBRARY=$BIN/libedgebert.so PYTHONPATH=$ROOT/bindings/python /usr/bin/python3 \
  "$ROOT/examples/retrieval/search.py" --embedder "$OUT/embedder.ebm" --reranker "$OUT/reranker.ebm" \
  --texts "$SST2/sst2_validation.tsv" --count 300 --top 20 --query "$QUERY" "$@"
