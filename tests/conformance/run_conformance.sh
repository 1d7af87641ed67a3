#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tokenizer conformance against HuggingFace's own tokenizers library (Rust, through npm):
# every shared tokenizer file (and the BERT vocabulary of the shared BERT checkpoint, as a
# tokenizer.json and as a vocab.txt folder, uncased / cased / CJK off) on the 83 multilingual
# inputs, the SST-2 sentences, text pairs, truncated pairs, adversarial, regex-oriented and 2750
# random strings; and the LLM encoders' tokenizer shapes built from those files
# (make_llm_variants.py: Qwen3-Embedding, Llama-3, EmbeddingGemma, Split regex behaviours).
# Prints one line of counts per tokenizer and input set; fails when an id or type id differs or
# fewer than 99% of the offsets / word ids agree (any offset or word id for vocab.txt folders). Skips (exit 77) without node/npm or ../shared.
# Usage: run_conformance.sh EDGEBERT_TOKENIZE WORK_DIR SHARED_DIR
set -u
tool=$1 work=$2 shared=$3
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -d "$shared/tokenizers" ]; then echo "SKIP: $shared/tokenizers not found"; exit 77; fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then echo "SKIP: node/npm not installed"; exit 77; fi
mkdir -p "$work"
if [ ! -d "$work/node_modules/@anush008/tokenizers" ]; then
  (cd "$work" && npm install --silent --no-audit --no-fund @anush008/tokenizers@0.6.0 >npm.log 2>&1) ||
    { echo "SKIP: npm install @anush008/tokenizers@0.6.0 failed (see $work/npm.log)"; exit 77; }
fi
python3 "$here/make_inputs.py" "$shared" "$work/inputs" || exit 1
export NODE_PATH="$work/node_modules"
status=0
run() {  # NAME TOKENIZER INPUTS [--max-length N]
  local name=$1 tok=$2 in=$3; shift 3
  mkdir -p "$work/$(dirname "$name")"
  node "$here/hf_encode.js" "$tok" "$in" "$@" >"$work/$name.hf.jsonl" || { echo "$name: hf_encode failed"; status=1; return; }
  "$tool" --tokenizer "$tok" --jsonl "$in" "$@" >"$work/$name.eb.jsonl" || { echo "$name: edgebert-tokenize failed"; status=1; return; }
  local exact=()
  [[ -d $tok ]] && exact=(--min-ratio 1)  # vocab.txt folders: every offset and word id too
  python3 "$here/compare.py" "$name" "$work/$name.eb.jsonl" "$work/$name.hf.jsonl" --inputs "$in" "${exact[@]}" || status=1
}
tokenizers=()
for t in roberta-base t5-small ru-unigram fr-sentencepiece-bpe; do
  [ -f "$shared/tokenizers/$t/tokenizer.json" ] && tokenizers+=("$t=$shared/tokenizers/$t/tokenizer.json")
done
bert="$shared/models/bert-tiny-sst2-encoder"
if [ -f "$bert/vocab.txt" ]; then
  # the tokenizer.json BertTokenizerFast writes for this vocabulary (WordPiece pipeline) ...
  node "$here/hf_encode.js" "$bert" --save-json "$work/bert-tokenizer.json" &&
    tokenizers+=("bert-wordpiece=$work/bert-tokenizer.json")
  # ... and the vocab.txt path (the same pipeline built from the vocabulary alone), with cased and
  # CJK-off variants of the folder
  tokenizers+=("bert-vocab.txt=$bert")
  if python3 "$here/make_vocab_variants.py" "$bert" "$work/vocab-variants"; then
    for v in vocab-cased vocab-nocjk vocab-cased-nocjk; do
      for set in conformance adversarial pairs; do run "$v/$set" "$work/vocab-variants/$v" "$work/inputs/$set.jsonl"; done
    done
    # (the 2750 random strings on one variant besides the uncased folder below: CI time)
    run "vocab-cased-nocjk/random" "$work/vocab-variants/vocab-cased-nocjk" "$work/inputs/random.jsonl"
  else
    echo "make_vocab_variants.py failed"; status=1
  fi
  run "bert-vocab.txt/random" "$bert" "$work/inputs/random.jsonl"
  run "bert-wordpiece/random" "$work/bert-tokenizer.json" "$work/inputs/random.jsonl"
fi
# variants of the shared files with the components they do not use (conformance, adversarial, pairs)
variants=()
if [ -f "$work/bert-tokenizer.json" ] && python3 "$here/make_variants.py" "$shared" "$work/bert-tokenizer.json" "$work/variants"; then
  for v in "$work"/variants/*.json; do variants+=("$(basename "$v" .json)=$v"); done
fi
for entry in "${variants[@]}"; do
  name=${entry%%=*} tok=${entry#*=}
  for set in conformance adversarial pairs; do run "$name/$set" "$tok" "$work/inputs/$set.jsonl"; done
done
# the LLM encoders' tokenizer shapes (Qwen3-Embedding, Llama-3, EmbeddingGemma) and Split regex
# behaviours, built from the shared vocabularies (make_llm_variants.py)
if python3 "$here/make_llm_variants.py" "$shared" "$work/llm-variants"; then
  for v in "$work"/llm-variants/*.json; do
    name=$(basename "$v" .json)
    case $name in
      split-*) sets="regex conformance" ;;
      *) sets="regex conformance adversarial pairs sst2"; run "$name/pairs-max16" "$v" "$work/inputs/pairs.jsonl" --max-length 16 ;;
    esac
    for set in $sets; do [ -f "$work/inputs/$set.jsonl" ] && run "$name/$set" "$v" "$work/inputs/$set.jsonl"; done
  done
else
  echo "make_llm_variants.py failed"; status=1
fi
for entry in "${tokenizers[@]}"; do
  name=${entry%%=*} tok=${entry#*=}
  for set in conformance sst2 pairs adversarial regex; do
    [ -f "$work/inputs/$set.jsonl" ] && run "$name/$set" "$tok" "$work/inputs/$set.jsonl"
  done
  run "$name/pairs-max16" "$tok" "$work/inputs/pairs.jsonl" --max-length 16
  run "$name/sst2-max8" "$tok" "$work/inputs/sst2.jsonl" --max-length 8
done
exit $status
