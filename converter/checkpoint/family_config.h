// SPDX-License-Identifier: Apache-2.0
// config.json readers of the families beyond BERT / DistilBERT, one per family: RoBERTa (model_type
// roberta, xlm-roberta, camembert), ELECTRA, ALBERT, nomic-bert (nomic_bert) and ModernBERT
// (modernbert, both the layer_types / rope_parameters spelling and the older
// global_attn_every_n_layers / global_rope_theta / local_rope_theta one). Each fills BertConfig's
// shape fields (hidden_size, heads, layers, intermediate_size: for gated FFNs the width of one
// half, vocab_size, max_position_embeddings, type_vocab_size, layer_norm_eps, activation) and
// BertConfig::family, and refuses what the family's HF code would compute differently from what
// the converter supports with a one-line error naming the file and key.
#pragma once

#include <string>

#include "converter/checkpoint/hf_checkpoint.h"
#include "converter/checkpoint/json.h"

namespace edgebert {
namespace convert {

constexpr const char* kSupportedModelTypes =
    "bert, distilbert, roberta, xlm-roberta, camembert, electra, albert, nomic_bert, modernbert, qwen3, gemma3_text";

// False when model_type is none of the families here; throws CheckpointError on a bad config.
bool read_family_config(const JsonValue& cfg, const std::string& path, BertConfig& c);

}  // namespace convert
}  // namespace edgebert
