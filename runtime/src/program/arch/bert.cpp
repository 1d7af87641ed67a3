// SPDX-License-Identifier: Apache-2.0
// bert.cpp: the BERT family builder: word + position + token-type embeddings, post-norm encoder
// layers, an optional pooler (tanh(dense(h[CLS]))) that feeds the sequence classifier, and the
// task heads.
#include "program/arch/blocks.h"
#include "program/arch/registry.h"

namespace edgebert {
namespace {

bool is_bert(const Model& m) { return m.family == Family::kBert && !m.layers.empty(); }

Status build_bert(ProgramBuilder& b) {
  const Model& m = b.model();
  blocks::Stream x = blocks::embeddings(b, m.embedding_norm, &m.layers[0].qkv);
  x = blocks::post_norm_encoder(b, x);
  const int pooled = m.has_pooler ? blocks::pooler(b, m.pooler, x.hidden) : -1;
  blocks::task_head(b, x.hidden, pooled >= 0 ? pooled : x.hidden);  // no pooler: h[CLS]
  return Status::ok();
}

}  // namespace

const ArchitectureBuilder kBertBuilder = {"bert", is_bert, build_bert};

}  // namespace edgebert
