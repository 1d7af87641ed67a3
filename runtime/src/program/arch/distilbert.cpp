// SPDX-License-Identifier: Apache-2.0
// distilbert.cpp: the DistilBERT family builder: word + position embeddings (no token types),
// post-norm encoder layers, no pooler; sequence classification reads relu(pre_classifier(h[CLS])).
#include "program/arch/blocks.h"
#include "program/arch/registry.h"

namespace edgebert {
namespace {

bool is_distilbert(const Model& m) { return m.is_distilbert && !m.layers.empty(); }

Status build_distilbert(ProgramBuilder& b) {
  const Model& m = b.model();
  blocks::Stream x = blocks::embeddings(b, m.embedding_norm, &m.layers[0].qkv);
  x = blocks::post_norm_encoder(b, x);
  if (m.has_pooler) blocks::pooler(b, m.pooler, x.hidden);  // not in DistilBERT itself; computed if a file has one
  int features = x.hidden;  // h[CLS]
  if (m.task == Task::kSequenceClassification && m.has_pre_classifier)
    features = blocks::pre_classifier(b, m.pre_classifier, x.hidden);
  blocks::task_head(b, x.hidden, features);
  return Status::ok();
}

}  // namespace

const ArchitectureBuilder kDistilBertBuilder = {"distilbert", is_distilbert, build_distilbert};

}  // namespace edgebert
