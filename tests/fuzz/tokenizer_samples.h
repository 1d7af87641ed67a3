// SPDX-License-Identifier: Apache-2.0
// tokenizer_samples.h: three small tokenizer.json texts, one per model kind (a BERT WordPiece, a
// RoBERTa-style byte-level BPE, a T5-style Unigram with NFKC, Replace and Metaspace), for the
// tokenizer fuzz targets and their seeds; and a tiny model file carrying one of them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer.h"

namespace edgebert::fuzz {

constexpr int kTokenizerKinds = 3;
const std::string& sample_tokenizer_json(int kind);  // 0 WordPiece, 1 BPE, 2 Unigram
// The .ebm bytes of an fp32 tiny model whose tokenizer is sample_tokenizer_json(kind).
std::vector<uint8_t> make_tiny_model_with_tokenizer(int kind);

// Encodes `input` with `t` and traps on a broken invariant. Byte 0 of input picks max_length
// (0 or a small limit) and whether the rest is a pair split at its first TAB. Checked: ids inside
// the vocabulary, offsets inside their own text with begin <= end, special tokens with {0, 0} and
// null word / sequence ids, word ids non-decreasing within a sequence, the length limit, a short
// output buffer getting a prefix with the same count, and the same result on a second run.
void check_encodings(const text::Tokenizer& t, std::string_view input);

}  // namespace edgebert::fuzz
