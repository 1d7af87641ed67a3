// SPDX-License-Identifier: Apache-2.0
// electra.cpp: the ELECTRA family builder: embeddings of embedding_size features, their LayerNorm,
// then the embeddings_project GEMM to hidden (the embeddings block adds it), BERT's post-norm
// encoder, and the classification head dense + GELU + out_proj on [CLS].
#include "program/arch/blocks.h"
#include "program/arch/registry.h"

namespace edgebert {
namespace {

bool is_electra(const Model& m) { return m.family == Family::kElectra && !m.layers.empty(); }

Status build_electra(ProgramBuilder& b) {
  blocks::post_norm_family(b);
  return Status::ok();
}

}  // namespace

const ArchitectureBuilder kElectraBuilder = {"electra", is_electra, build_electra};

}  // namespace edgebert
