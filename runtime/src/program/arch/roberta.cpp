// SPDX-License-Identifier: Apache-2.0
// roberta.cpp: the RoBERTa family builder (RoBERTa, XLM-RoBERTa, CamemBERT): BERT's post-norm
// encoder with RoBERTa's position ids (padding_idx + 1 + the count of non-pad tokens so far; pads
// get padding_idx, computed by the embeddings op from Config.position_ids PADDING_OFFSET), one
// token type, and the classification head dense + tanh + out_proj on <s> (no pooler).
#include "program/arch/blocks.h"
#include "program/arch/registry.h"

namespace edgebert {
namespace {

bool is_roberta(const Model& m) { return m.family == Family::kRoberta && !m.layers.empty(); }

Status build_roberta(ProgramBuilder& b) {
  blocks::post_norm_family(b);
  return Status::ok();
}

}  // namespace

const ArchitectureBuilder kRobertaBuilder = {"roberta", is_roberta, build_roberta};

}  // namespace edgebert
