// SPDX-License-Identifier: Apache-2.0
// bge_m3_heads.h: a bge-m3 folder (FlagEmbedding's BGEM3FlagModel: an XLM-R encoder with
// sparse_linear and colbert_linear beside it): finding its heads, reading them from
// .safetensors (a .pt, a pickle the converter never executes, is refused with the one-line torch
// conversion), and the token ids FlagEmbedding leaves out of the sparse weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter/float_bert.h"

namespace edgebert::convert {

struct TokenizerJson;

// True when DIR holds sparse_linear.safetensors and colbert_linear.safetensors. Throws (one line)
// for a head that is only a .pt (with the torch command that writes the .safetensors) and for one
// head without the other.
bool has_bge_m3_heads(const std::string& dir);

// Reads both heads into `m` (a bge-m3 model of hidden size m.config.hidden_size): sparse_linear
// "weight" [1, H] + "bias" [1] into m.sparse_linear; colbert_linear "weight" [D, H] + "bias" [D]
// into m.classifier (num_labels = D). The dense output is CLS + normalize. Every tensor of the
// files is used; wrong shapes and extra tensors are one-line errors.
void load_bge_m3_heads(const std::string& dir, FloatBert& m);

// FlagEmbedding's unused_tokens: the ids of the tokenizer's cls_token, eos_token, pad_token and
// unk_token, named by DIR/tokenizer_config.json (else DIR/special_tokens_map.json) and looked up
// in the tokenizer's vocabulary (tokenizer.json, `t`). A token that is not named, or not in the
// vocabulary, is an error naming it. Sorted, no duplicates.
std::vector<int32_t> bge_m3_unused_ids(const std::string& dir, const TokenizerJson& t);

}  // namespace edgebert::convert
