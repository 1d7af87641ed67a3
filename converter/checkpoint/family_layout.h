// SPDX-License-Identifier: Apache-2.0
// Where each family keeps its tensors: the checkpoint mapping of BERT, DistilBERT, RoBERTa (also
// XLM-RoBERTa, CamemBERT), ELECTRA, ALBERT, nomic-bert and ModernBERT, as canonical names (without
// the base-model prefix; see hf_checkpoint.h). One function per family fills FamilyLayout; the
// loader (converter/float_bert.cpp) reads exactly these tensors, so everything else in a checkpoint
// is reported as unused (or noted when training-only).
#pragma once

#include <string>
#include <vector>

#include "converter/checkpoint/hf_checkpoint.h"

namespace edgebert {
namespace convert {

// The tensors of one stored encoder layer ("" = the family has none). Linear names are prefixes of
// NAME.weight / NAME.bias, LayerNorm names of NAME.weight / NAME.bias.
struct LayerLayout {
  std::string q, k, v;      // separate projections, or
  std::string qkv;          // one fused [3H, H] projection (rows Q, K, V; head-major within each)
  std::string attention_output;
  std::string attention_norm;  // post-norm: after the attention residual; pre-norm: before attention
  // FFN input: a plain [I, H] linear; for gated FFNs either one fused [2I, H] linear whose first
  // half goes through the activation (ModernBERT Wi = [input; gate]: act(input) * gate) or two
  // linears, `gate_act` through the activation and `gate_value` multiplied with it (nomic fc12 /
  // fc11: fc11(x) * act(fc12(x))).
  std::string intermediate;
  std::string gate_act, gate_value;
  std::string output;
  std::string output_norm;  // post-norm: after the FFN residual; pre-norm: before the FFN
  std::string q_norm, k_norm;  // per-head RMSNorm of Q and K (Qwen3), or ""
  std::string attention_post_norm, ffn_post_norm;  // norms of the branch outputs (Gemma 3), or ""
};

struct FamilyLayout {
  std::string word, position, token_type;  // embedding tables ("" when absent)
  std::string embedding_norm;
  std::string embedding_projection;  // ELECTRA embeddings_project / ALBERT embedding_hidden_mapping_in
  std::vector<LayerLayout> layers;   // stored layers
  std::vector<int> layer_map;        // applied layer -> stored layer (ALBERT's shared groups)
  std::string final_norm;            // ModernBERT final_norm
  std::string pooler;                // BERT-style pooler linear ("" when the family has none)
};

// The layout of the checkpoint's family (its config decides groups, fused or split projections).
FamilyLayout family_layout(const BertConfig& config);

}  // namespace convert
}  // namespace edgebert
